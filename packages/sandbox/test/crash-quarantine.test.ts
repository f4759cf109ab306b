// Blame for a process abort is only ever certain: a pair is struck only when it crashed a
// process alone; neighbours caught in a shared crash become suspects (run alone) and are
// cleared once the culprit is convicted, so a hostile tenant cannot get a neighbour
// quarantined. Strikes within the window quarantine with doubling backoff.
import { describe, expect, it } from 'vitest';
import { CrashQuarantine } from '../src/host/crash-quarantine.js';

function clock() {
  let now = 1_000_000;
  return { now: () => now, advance: (ms: number) => (now += ms) };
}
const options = { crashes: 3, windowMs: 60_000, baseMs: 30_000, maxMs: 240_000 };
const evil = { tenant: 'mallory', plugin: 'crasher' };
const victim = { tenant: 'alice', plugin: 'notes' };

describe('crash quarantine', () => {
  it('three crashes pinned on one pair within the window quarantine it; it says until when', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([evil]);
    q.recordCrash([evil]);
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    q.recordCrash([evil]);
    const refusal = q.refusal(evil.tenant, evil.plugin);
    expect(refusal).toContain('quarantined until');
    expect(refusal).toContain(new Date(time.now() + 30_000).toISOString());
    expect(q.refusal('mallory', 'other-plugin')).toBeUndefined();
    expect(q.refusal('bob', 'crasher')).toBeUndefined();
    time.advance(30_001);
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
  });

  it('strikes spread wider than the window do not add up', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    for (let i = 0; i < 5; i += 1) {
      q.recordCrash([evil]);
      time.advance(31_000);
    }
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
  });

  it('a repeat offender after release is quarantined again at once, for twice as long, up to the cap', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    for (let i = 0; i < 3; i += 1) q.recordCrash([evil]);
    const lengths: number[] = [];
    for (let round = 0; round < 4; round += 1) {
      const until = Date.parse(/until (\S+):/.exec(q.refusal(evil.tenant, evil.plugin)!)![1]!);
      lengths.push(until - time.now());
      time.advance(until - time.now() + 1);
      q.recordCrash([evil]);
    }
    expect(lengths).toEqual([30_000, 60_000, 120_000, 240_000]);
  });

  it('a released pair stays a suspect (runs in probation, alone) for maxMs after its release, however long its quarantine', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    for (let i = 0; i < 3; i += 1) q.recordCrash([evil]);
    time.advance(30_001); // released: 30 s quarantine
    q.recordCrash([evil]); // certain, on probation: quarantined again, for 60 s
    expect(q.refusal(evil.tenant, evil.plugin)).toContain('quarantined');
    time.advance(60_001); // released again; its last strike is now older than the window
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    time.advance(options.maxMs - 2);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    time.advance(2);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(false);
  });

  it('a neighbour caught in shared crashes is never struck; it runs alone until the culprit is convicted', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    for (let i = 0; i < 10; i += 1) q.recordCrash([evil, victim]);
    expect(q.refusal(victim.tenant, victim.plugin)).toBeUndefined();
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
    expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(true);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    // Run alone, the culprit crashes its process by itself: certain blame, the neighbour is cleared.
    q.recordCrash([evil]);
    expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(false);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    q.recordCrash([evil]);
    q.recordCrash([evil]);
    expect(q.refusal(evil.tenant, evil.plugin)).toContain('quarantined');
    expect(q.refusal(victim.tenant, victim.plugin)).toBeUndefined();
  });

  it('work no tenant owns in flight (plugin loading) makes a crash unattributable', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([evil, undefined]);
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    time.advance(60_001);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(false);
    for (let i = 0; i < 5; i += 1) q.recordCrash([evil, undefined]);
    expect(q.refusal(evil.tenant, evil.plugin)).toBeUndefined();
  });

  it('a pair that crashed a process for certain stays a suspect for maxMs, not just the window', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([evil]);
    time.advance(options.maxMs - 1);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(true);
    time.advance(1);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(false);
  });

  it('a crasher that waits out each suspicion to crash its shard again is a suspect twice as long each time, up to maxMs, until it has been quiet for maxMs', () => {
    // An outside attack: one abort a minute and a bit, each in the shared process beside a
    // neighbour's call, never three certain strikes in a window: never quarantined, and with
    // suspicion fixed at the window, the neighbour's calls were killed every time.
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    const lengths: number[] = [];
    for (let round = 0; round < 5; round += 1) {
      q.recordCrash([evil, victim]);
      const started = time.now();
      while (q.isSuspect(evil.tenant, evil.plugin)) time.advance(1000);
      expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(false);
      lengths.push(time.now() - started);
      time.advance(1000);
    }
    expect(lengths).toEqual([60_000, 120_000, 240_000, 240_000, 240_000]);
    expect(q.refusal(victim.tenant, victim.plugin)).toBeUndefined();
    time.advance(options.maxMs);
    q.recordCrash([evil, victim]);
    time.advance(60_000);
    expect(q.isSuspect(evil.tenant, evil.plugin)).toBe(false);
  });

  it('a conviction clears no co-suspect running the same plugin or of the same tenant', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    const samePlugin = { tenant: 'trent', plugin: evil.plugin };
    const sameTenant = { tenant: evil.tenant, plugin: 'other' };
    q.recordCrash([evil, samePlugin, sameTenant, victim]);
    q.recordCrash([evil]);
    expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(false);
    expect(q.isSuspect(samePlugin.tenant, samePlugin.plugin)).toBe(true);
    expect(q.isSuspect(sameTenant.tenant, sameTenant.plugin)).toBe(true);
  });

  it('a neighbour cleared by the culprit\'s conviction starts afresh', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([evil, victim]);
    time.advance(60_000);
    q.recordCrash([evil, victim]);
    q.recordCrash([evil]);
    expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(false);
    q.recordCrash([victim, { tenant: 'bob', plugin: 'notes' }]);
    time.advance(60_000);
    expect(q.isSuspect(victim.tenant, victim.plugin)).toBe(false);
  });
});

describe('a tenant implicated by more than one plugin', () => {
  const neighbour = { tenant: 'alice', plugin: 'notes' };
  const plugin = (n: number) => ({ tenant: evil.tenant, plugin: `crasher-${n}` });

  it('is a suspect with every plugin once two crash in separate shared crashes: fresh plugins cost the neighbours two crashes, not one each', () => {
    // An outside finding: blame needs a first crash, so every new plugin of the attacker
    // crashed its shard once, beside whoever was there.
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([plugin(1), neighbour]);
    expect(q.isSuspect(evil.tenant, plugin(2).plugin)).toBe(false);
    q.recordCrash([plugin(2), neighbour]);
    expect(q.isSuspect(evil.tenant, plugin(3).plugin)).toBe(true);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(true);
    // The neighbour used one plugin: only that pair is a suspect, its others run in the shard.
    expect(q.isSuspect(neighbour.tenant, 'calendar')).toBe(false);
    // The implication lasts while the shared crashes keep its pairs suspects.
    time.advance(60_000);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(false);
  });

  it('a convicted plugin implicates its tenant for maxMs: one shared crash of any other plugin makes it a suspect tenant-wide again', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([plugin(1), neighbour]);
    q.recordCrash([plugin(2), neighbour]);
    q.recordCrash([plugin(1)]);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(true);
    time.advance(options.windowMs);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(false);
    q.recordCrash([plugin(3), { tenant: 'bob', plugin: 'notes' }]);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(true);
    time.advance(options.maxMs - options.windowMs);
    expect(q.isSuspect(evil.tenant, 'never-crashed')).toBe(false);
  });

  it('a neighbour caught with two plugins is a suspect tenant-wide only for the window after: an attacker crashing whenever it is out of probation does not keep it one call at a time', () => {
    // An outside attack: two plugins of one tenant, each crashing its shard whenever it was out
    // of probation, each crash catching another plugin of the neighbour. With the suspicion's
    // doubling as the measure, the neighbour's every plugin ran one call at a time all hour.
    const time = clock();
    const q = new CrashQuarantine({ ...options, maxMs: 15 * 60_000, now: time.now });
    const caught = [neighbour, { tenant: neighbour.tenant, plugin: 'calendar' }];
    let crashes = 0;
    let suspectSeconds = 0;
    for (let second = 0; second < 3600; second += 1) {
      for (const n of [1, 2]) {
        if (q.isSuspect(evil.tenant, plugin(n).plugin)) continue;
        q.recordCrash([plugin(n), caught[n - 1]]);
        crashes += 1;
      }
      if (q.isSuspect(neighbour.tenant, 'mail')) suspectSeconds += 1;
      time.advance(1000);
    }
    expect(crashes).toBeGreaterThan(4);
    expect(suspectSeconds).toBeLessThanOrEqual(crashes / 2 * 60);
    expect(suspectSeconds).toBeLessThan(600);
  });

  it('is not implicated by one plugin however often it is struck, nor by two plugins caught in one crash', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    for (let i = 0; i < 5; i += 1) q.recordCrash([plugin(1)]);
    expect(q.refusal(evil.tenant, plugin(1).plugin)).toContain('quarantined');
    expect(q.isSuspect(evil.tenant, 'other')).toBe(false);
    const busy = { tenant: 'carol', plugin: 'a' };
    q.recordCrash([busy, { tenant: 'carol', plugin: 'b' }, { tenant: 'dave', plugin: 'x' }]);
    expect(q.isSuspect('carol', 'c')).toBe(false);
  });

  it('a neighbour caught twice with different plugins is cleared tenant-wide once the culprits are convicted', () => {
    const time = clock();
    const q = new CrashQuarantine({ ...options, now: time.now });
    q.recordCrash([plugin(1), neighbour]);
    q.recordCrash([plugin(2), { tenant: neighbour.tenant, plugin: 'calendar' }]);
    expect(q.isSuspect(neighbour.tenant, 'mail')).toBe(true);
    q.recordCrash([plugin(1)]);
    q.recordCrash([plugin(2)]);
    expect(q.isSuspect(neighbour.tenant, 'mail')).toBe(false);
    expect(q.isSuspect(neighbour.tenant, neighbour.plugin)).toBe(false);
    expect(q.isSuspect(evil.tenant, 'mail')).toBe(true);
  });
});
