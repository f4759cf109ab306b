// Admission is work-conserving and fair: a lone tenant fills every thread; under
// contention freed threads go to the tenant holding the fewest (by weight); a tenant with
// nothing running takes the reserve at once; cancellation while queued is
// ABORTED_BEFORE_DISPATCH; many waiters on one signal add one listener, not one each;
// a crash suspect is placed in the probation lane, one call at a time.
import { ToolCallError } from '@airlock/core';
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { Admission, type Grant } from '../src/admission/admission.js';
import { FairShare } from '../src/admission/fair-share.js';

const never = new AbortController().signal;
/** One process holding every thread. */
const lane = (threads: number, reserveThreads = 0, weights: Record<string, number> = {}) => {
  const share = new FairShare({ threads, reserveThreads, placements: [threads + reserveThreads], weightOf: (tenant) => weights[tenant] ?? 1 });
  return { acquire: (tenant: string, signal: AbortSignal) => share.acquire(tenant, 0, signal).then(({ release }) => release) };
};

/** Queues calls and records the order in which they are admitted. */
function recorder(gate: ReturnType<typeof lane>) {
  const admitted: string[] = [];
  const releases = new Map<string, () => void>();
  const call = (tenant: string, id: string, signal = never) =>
    gate.acquire(tenant, signal).then((release) => {
      admitted.push(id);
      releases.set(id, release);
    });
  const release = async (id: string) => {
    releases.get(id)!();
    await settle();
  };
  return { admitted, call, release };
}
const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('fair-share admission', () => {
  it('a lone tenant uses every thread of an idle pool (work-conserving)', async () => {
    const { admitted, call } = recorder(lane(4));
    for (let i = 0; i < 5; i += 1) void call('solo', `s${i}`);
    await settle();
    expect(admitted).toEqual(['s0', 's1', 's2', 's3']);
  });

  it('a light tenant is admitted before a hog\'s queued calls', async () => {
    const { admitted, call, release } = recorder(lane(2));
    for (let i = 0; i < 6; i += 1) void call('hog', `h${i}`);
    await settle();
    void call('light', 'l0');
    await settle();
    expect(admitted).toEqual(['h0', 'h1']);
    await release('h0');
    expect(admitted).toEqual(['h0', 'h1', 'l0']);
    await release('h1');
    expect(admitted.at(-1)).toBe('h2');
  });

  it('with a reserve thread, a tenant with nothing running starts at once beside a hog that fills the pool', async () => {
    const { admitted, call } = recorder(lane(2, 1));
    for (let i = 0; i < 6; i += 1) void call('hog', `h${i}`);
    await settle();
    expect(admitted).toEqual(['h0', 'h1']); // the hog never takes the reserve
    void call('light', 'l0');
    void call('light', 'l1');
    await settle();
    expect(admitted).toEqual(['h0', 'h1', 'l0']); // but its second call waits its turn
  });

  it('a tenant calling one call at a time keeps its thread between calls: a hog already running may not take it', async () => {
    // A claim longer than the test: the hog's queued call can only start when the claim is gone.
    const share = new FairShare({ threads: 2, reserveThreads: 1, placements: [3], weightOf: () => 1, claimMs: 60_000 });
    const { admitted, call, release } = recorder({ acquire: (tenant, signal) => share.acquire(tenant, 0, signal).then(({ release: free }) => free) });
    for (let i = 0; i < 4; i += 1) void call('hog', `h${i}`);
    void call('light', 'l0');
    await settle();
    expect(admitted).toEqual(['h0', 'h1', 'l0']); // the light call took the reserve
    await release('h0');
    expect(admitted).toEqual(['h0', 'h1', 'l0']); // hog 1 + light 1: the hog does not grow back onto the reserve
    await release('l0');
    expect(admitted).toEqual(['h0', 'h1', 'l0']); // the light tenant's thread stays claimed between its calls
    void call('light', 'l1');
    await settle();
    expect(admitted).toEqual(['h0', 'h1', 'l0', 'l1']); // and its next call finds it at once
    // A tenant with nothing running is never held back by a claim.
    await release('l1');
    void call('third', 't0');
    await settle();
    expect(admitted.at(-1)).toBe('t0');
  });

  it('a claim ends after claimMs and the waiting hog gets the thread', async () => {
    const share = new FairShare({ threads: 2, reserveThreads: 0, placements: [2], weightOf: () => 1, claimMs: 5 });
    const first = await share.acquire('hog', 0, never);
    const light = await share.acquire('light', 0, never);
    const queued = share.acquire('hog', 0, never);
    light.release(); // the light tenant leaves for good
    const { release } = await queued; // admitted once the claim expired: a signal, not a sleep
    expect(share.running).toBe(2);
    release();
    first.release();
  });

  it('under contention tenants alternate, and shares follow the weights', async () => {
    const { admitted, call, release } = recorder(lane(1, 0, { gold: 3 }));
    void call('a', 'a0');
    for (let i = 1; i <= 3; i += 1) void call('a', `a${i}`);
    for (let i = 1; i <= 3; i += 1) void call('b', `b${i}`);
    await settle();
    for (const id of ['a0', 'b1', 'a1', 'b2', 'a2', 'b3']) await release(id);
    expect(admitted).toEqual(['a0', 'b1', 'a1', 'b2', 'a2', 'b3', 'a3']);

    // 4 threads, gold weighs 3: while both wait, gold holds three threads for every one of plain.
    const weighted = recorder(lane(4, 0, { gold: 3 }));
    for (let i = 0; i < 8; i += 1) void weighted.call('plain', `p${i}`);
    await settle();
    for (let i = 0; i < 8; i += 1) void weighted.call('gold', `g${i}`);
    await settle();
    for (const id of ['p0', 'p1', 'p2', 'p3']) await weighted.release(id);
    expect(weighted.admitted.slice(4).sort()).toEqual(['g0', 'g1', 'g2', 'p4']);
  });

  it('a call cancelled while queued is ABORTED_BEFORE_DISPATCH and leaves the queue', async () => {
    const gate = lane(1);
    const { admitted, call, release } = recorder(gate);
    void call('a', 'first');
    const controller = new AbortController();
    const queued = gate.acquire('b', controller.signal);
    void call('c', 'after');
    controller.abort();
    const error = await queued.catch((thrown: unknown) => thrown);
    expect(ToolCallError.isInstance(error) && error.code).toBe('ABORTED_BEFORE_DISPATCH');
    await release('first');
    expect(admitted).toEqual(['first', 'after']);
  });

  it('many calls waiting on one signal add one abort listener, not one each', async () => {
    const warnings: Error[] = [];
    const onWarning = (warning: Error) => warnings.push(warning);
    process.on('warning', onWarning);
    try {
      const gate = lane(1);
      const controller = new AbortController();
      const waiting = Array.from({ length: 200 }, () => gate.acquire('t', controller.signal).then((release) => release()));
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(1);
      controller.abort();
      const outcomes = await Promise.allSettled(waiting);
      expect(outcomes[0]!.status).toBe('fulfilled'); // the first was admitted at once
      expect(outcomes.slice(1).every((outcome) => outcome.status === 'rejected')).toBe(true);
      expect(getEventListeners(controller.signal, 'abort')).toHaveLength(0);
      await settle();
      expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('the thread count holds across processes: two shards never run more than threads + reserve at once', async () => {
    const share = new FairShare({ threads: 2, reserveThreads: 1, placements: [3, 3], weightOf: () => 1 });
    const admitted: string[] = [];
    const releases = new Map<string, () => void>();
    const call = (tenant: string, placement: number, id: string) =>
      void share.acquire(tenant, placement, never).then(({ release }) => {
        admitted.push(id);
        releases.set(id, release);
      });
    for (let i = 0; i < 3; i += 1) call('a', 0, `a${i}`);
    await settle();
    call('b', 1, 'b0');
    call('b', 1, 'b1');
    call('c', 1, 'c0');
    await settle();
    expect(admitted).toEqual(['a0', 'a1', 'b0']); // a fills the threads, b takes the reserve, c waits
    expect(share.running).toBe(3);
    releases.get('a0')!();
    await settle();
    expect(admitted.at(-1)).toBe('c0'); // c holds nothing: it goes before b's second call and a's third
  });

  it('thirty calls of one turn waiting hold one abort listener, and none once all are admitted', async () => {
    const gate = lane(1);
    const turn = new AbortController();
    const first = await gate.acquire('t', turn.signal);
    const waiting = Array.from({ length: 30 }, () => gate.acquire('t', turn.signal));
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(1);
    let release = first;
    for (const next of waiting) {
      release();
      release = await next;
    }
    release();
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
  });

  it('aborting a signal rejects every waiter of it; waiters of other signals keep their place', async () => {
    const gate = lane(1);
    const turn = new AbortController();
    const other = new AbortController();
    const held = await gate.acquire('t', other.signal);
    const doomed = [gate.acquire('t', turn.signal), gate.acquire('u', turn.signal)];
    const survivor = gate.acquire('t', other.signal);
    turn.abort(new Error('cancelled'));
    for (const promise of doomed) await expect(promise).rejects.toMatchObject({ code: 'ABORTED_BEFORE_DISPATCH' });
    held();
    (await survivor)();
    expect(getEventListeners(turn.signal, 'abort')).toHaveLength(0);
    expect(getEventListeners(other.signal, 'abort')).toHaveLength(0);
  });

  it('a crash suspect is placed in probation, one call at a time, never beside other tenants', async () => {
    const suspects = new Set(['mallory']);
    const admission = new Admission({
      threads: 4,
      reserveThreads: 1,
      placements: [5, 1],
      weightOf: () => 1,
      placementOf: (tenant) => (suspects.has(tenant) ? 1 : 0),
    });
    const first = await admission.acquire('mallory', 'p', never);
    expect(first.placement).toBe(1);
    let second: Grant | undefined;
    void admission.acquire('mallory', 'p', never).then((grant) => (second = grant));
    const others = await Promise.all([admission.acquire('alice', 'p', never), admission.acquire('bob', 'p', never)]);
    expect(others.map((grant) => grant.placement)).toEqual([0, 0]);
    await settle();
    expect(second).toBeUndefined(); // probation runs one call at a time
    first.release();
    await settle();
    expect(second?.placement).toBe(1);
  });

  it('a queued call is placed when it is admitted: a pair that became a suspect while it waited goes to probation, one cleared goes to its shard', async () => {
    const suspects = new Set(['bob']);
    const admission = new Admission({
      threads: 2,
      reserveThreads: 0,
      placements: [2, 1],
      weightOf: () => 1,
      placementOf: (tenant) => (suspects.has(tenant) ? 1 : 0),
    });
    const alice = await admission.acquire('alice', 'p', never);
    const carol = await admission.acquire('carol', 'p', never);
    const grants = new Map<string, Grant>();
    for (const tenant of ['mallory', 'bob']) void admission.acquire(tenant, 'p', never).then((grant) => grants.set(tenant, grant));
    await settle();
    expect(grants.size).toBe(0); // both threads taken
    // A crash while they wait: mallory is now a suspect, bob is cleared.
    suspects.add('mallory');
    suspects.delete('bob');
    alice.release();
    await settle();
    expect(grants.get('mallory')?.placement).toBe(1); // not the shard it queued for
    carol.release();
    await settle();
    expect(grants.get('bob')?.placement).toBe(0); // not stuck behind probation's one call
  });
});
