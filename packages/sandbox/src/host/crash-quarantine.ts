// Who keeps crashing a sandbox process, and who is quarantined for it.
//
// A worker that dies under a call is pinned on that call. A process abort kills every
// call in flight in it, and nothing says which one caused it.
// So blame is only ever certain: a crash counts against a tenant+plugin pair ("a strike")
// only when that pair was the sole one in flight. A pair caught in a crash beside others
// becomes a suspect, and a suspect's calls run in a probation process, one at a time
// (ShardedHost, admission's probation lane): if it crashes again, the blame is certain,
// and its co-suspects from earlier crashes are cleared. An innocent neighbour is never struck, so a hostile tenant
// cannot get another quarantined by crashing beside it.
//
// `crashes` strikes within `windowMs` quarantine the pair for `baseMs`, doubling on each
// repeat up to `maxMs`. Released, the pair stays on probation for `maxMs`: its calls run in
// the probation process (a suspect, alone), so one more abort costs nobody else and, being
// certain, re-quarantines it at once. Quarantined calls fail fast with SANDBOX_CRASH and
// never reach a process. Together: once a pair is quarantined, its aborts take down no
// other tenant's call again.
//
// How long suspicion lasts is what a patient attacker plays with: a pair that crashed once
// and then waited out its suspicion before crashing again, in its shard, beside whoever
// was there, was never quarantined and killed its neighbours' calls once a minute for as
// long as it liked (an outside attack). So a certain strike keeps its pair on probation
// for `maxMs`, and each shared crash a pair is caught in doubles how long it stays a
// suspect (from `windowMs` up to `maxMs`), until it has been quiet for `maxMs` after its
// suspicion ended. A neighbour caught beside the attacker pays the same way, in calls run
// one at a time rather than killed, and goes free as soon as the culprit is convicted.
//
// A pair's first crash is always shared, so an attacker with k plugins had k crashes of its
// neighbours' calls, one per new pair. So a tenant with two plugins implicated by separate
// incidents (a shared crash each within `windowMs`, not yet explained by a conviction; or a
// certain strike or quarantine within `maxMs`) is a suspect with all of its plugins, those
// that never crashed too: a burst of fresh plugins costs its neighbours two shared crashes,
// not one per plugin. One plugin however often struck, or two caught in one crash,
// implicates only its own pairs. A neighbour caught twice with different plugins is a
// suspect tenant-wide as well (the crashes look the same from its side), which is why shared
// crashes count for `windowMs` only, not for their pairs' doubling suspicion: an outside
// attack that crashed its shard whenever it was out of probation kept such a neighbour's
// every plugin one call at a time for the whole hour. A patient attacker, one fresh plugin
// a minute, still costs its neighbours a call a minute.

export interface QuarantineOptions {
  /** Certain crashes within the window that quarantine a pair. Default 3. */
  readonly crashes: number;
  readonly windowMs: number;
  /** First quarantine; each repeat doubles it. */
  readonly baseMs: number;
  /** Longest quarantine; also how long a released pair stays on probation. */
  readonly maxMs: number;
  readonly now?: () => number;
}

export const DEFAULT_QUARANTINE: QuarantineOptions = Object.freeze({ crashes: 3, windowMs: 60_000, baseMs: 30_000, maxMs: 15 * 60_000 });

/** A task in flight when its process died: its pair, or undefined for work no tenant owns (plugin loading). */
export type InFlightPair = { readonly tenant: string; readonly plugin: string } | undefined;

interface PairRecord {
  readonly tenant: string;
  readonly plugin: string;
  /** Times of certain crashes, within the window. */
  strikes: number[];
  lastStrikeAt: number;
  /** Crashes this pair was caught in beside others, not yet pinned on anyone: id to time. */
  readonly unexplained: Map<number, number>;
  /** Shared crashes that made it a suspect since it was last quiet: the suspicion's doubling exponent. */
  suspicionLevel: number;
  /** A suspect until then, for the shared crashes it was caught in. */
  suspectUntil: number;
  quarantinedUntil: number;
  /** Quarantines so far: the backoff exponent. */
  level: number;
}

export class CrashQuarantine {
  readonly #options: QuarantineOptions;
  readonly #now: () => number;
  readonly #pairs = new Map<string, PairRecord>();
  /** The same records by tenant, for the tenant-wide check on every placement. */
  readonly #byTenant = new Map<string, Set<PairRecord>>();
  /** Pairs caught in each shared crash, for clearing co-suspects once one is convicted. */
  readonly #crashes = new Map<number, { readonly at: number; readonly pairs: readonly string[] }>();
  #nextCrash = 1;

  constructor(options: QuarantineOptions = DEFAULT_QUARANTINE) {
    this.#options = options;
    this.#now = options.now ?? Date.now;
  }

  /** A sandbox process (or a call's worker) died with these tasks in flight. */
  recordCrash(inFlight: readonly InFlightPair[]): void {
    const now = this.#now();
    this.#prune(now);
    const keys = [...new Set(inFlight.filter((pair) => pair !== undefined).map((pair) => keyOf(pair.tenant, pair.plugin)))];
    const byKey = new Map(inFlight.filter((pair) => pair !== undefined).map((pair) => [keyOf(pair.tenant, pair.plugin), pair]));
    if (keys.length === 0) return;
    if (keys.length === 1 && !inFlight.includes(undefined)) {
      const pair = byKey.get(keys[0] as string)!;
      this.#strike(this.#record(pair.tenant, pair.plugin), now);
      return;
    }
    const crash = this.#nextCrash;
    this.#nextCrash += 1;
    this.#crashes.set(crash, { at: now, pairs: keys });
    const { windowMs, maxMs } = this.#options;
    for (const key of keys) {
      const pair = byKey.get(key)!;
      const record = this.#record(pair.tenant, pair.plugin);
      record.unexplained.set(crash, now);
      if (now - record.suspectUntil >= maxMs) record.suspicionLevel = 0;
      record.suspicionLevel += 1;
      record.suspectUntil = Math.max(record.suspectUntil, now + Math.min(maxMs, windowMs * 2 ** (record.suspicionLevel - 1)));
    }
  }

  /** Why this pair's calls are refused now, or undefined if they may run. */
  refusal(tenant: string, plugin: string): string | undefined {
    const record = this.#pairs.get(keyOf(tenant, plugin));
    if (record === undefined || record.quarantinedUntil <= this.#now()) return undefined;
    const seconds = Math.round(this.#options.windowMs / 1000);
    return `tenant ${JSON.stringify(tenant)}'s plugin ${JSON.stringify(plugin)} is quarantined until ${new Date(record.quarantinedUntil).toISOString()}: it crashed its sandbox process ${record.level > 1 ? 'again after a quarantine' : `${this.#options.crashes} times within ${seconds} s`}`;
  }

  /**
   * A crash points at this pair, or it was released from a quarantine not long ago: its
   * calls run in probation, for `maxMs` after a certain crash or a release, and for its
   * suspicion's length after a shared one (unless another is convicted of it). Back in its
   * shard, a crasher takes its neighbours down with its next abort, and that shared crash
   * does not even count against it. A tenant with two plugins implicated separately is a
   * suspect with every plugin (see the top of this file).
   */
  isSuspect(tenant: string, plugin: string): boolean {
    const record = this.#pairs.get(keyOf(tenant, plugin));
    const now = this.#now();
    if (record !== undefined) {
      if (this.#onProbation(record, now)) return true;
      if (now - record.lastStrikeAt < this.#options.maxMs) return true;
      if (now < record.suspectUntil) return true;
    }
    return this.#tenantImplicated(tenant, now);
  }

  /** Two or more of the tenant's plugins implicated, by two or more separate incidents. */
  #tenantImplicated(tenant: string, now: number): boolean {
    const plugins = new Set<string>();
    const incidents = new Set<string>();
    for (const record of this.#byTenant.get(tenant) ?? []) {
      for (const [crash, at] of record.unexplained) {
        if (now - at >= this.#options.windowMs) continue;
        incidents.add(`crash ${crash}`);
        plugins.add(record.plugin);
      }
      if (now - record.lastStrikeAt < this.#options.maxMs || this.#onProbation(record, now)) {
        incidents.add(`strike ${record.plugin}`);
        plugins.add(record.plugin);
      }
    }
    return plugins.size >= 2 && incidents.size >= 2;
  }

  #record(tenant: string, plugin: string): PairRecord {
    const key = keyOf(tenant, plugin);
    let record = this.#pairs.get(key);
    if (record === undefined) {
      record = { tenant, plugin, strikes: [], lastStrikeAt: -Infinity, unexplained: new Map(), suspicionLevel: 0, suspectUntil: -Infinity, quarantinedUntil: 0, level: 0 };
      this.#pairs.set(key, record);
      const ofTenant = this.#byTenant.get(tenant) ?? new Set();
      this.#byTenant.set(tenant, ofTenant.add(record));
    }
    return record;
  }

  #strike(record: PairRecord, now: number): void {
    const { crashes, windowMs, baseMs, maxMs } = this.#options;
    // Convicted: the shared crashes it was caught in are explained, so its co-suspects go free
    // (one still caught in a crash nobody explained stays a suspect), except those running the
    // same plugin or of the same tenant: the same code, or the same hand, may have done it.
    for (const crash of record.unexplained.keys()) {
      for (const key of this.#crashes.get(crash)?.pairs ?? []) {
        const suspect = this.#pairs.get(key);
        if (suspect === undefined || suspect === record || suspect.plugin === record.plugin || suspect.tenant === record.tenant) continue;
        suspect.unexplained.delete(crash);
        if (suspect.unexplained.size === 0) {
          suspect.suspectUntil = -Infinity;
          suspect.suspicionLevel = 0;
        }
      }
      this.#crashes.delete(crash);
    }
    record.unexplained.clear();
    // A long quiet spell forgives earlier quarantines.
    if (now - record.lastStrikeAt > maxMs && record.quarantinedUntil + maxMs < now) record.level = 0;
    const onProbation = this.#onProbation(record, now);
    record.strikes = [...record.strikes.filter((at) => now - at < windowMs), now];
    record.lastStrikeAt = now;
    if (!onProbation && record.strikes.length < crashes) return;
    record.quarantinedUntil = now + Math.min(maxMs, baseMs * 2 ** record.level);
    record.level += 1;
    record.strikes = [];
  }

  /** Released from a quarantine less than `maxMs` ago: one more certain crash quarantines it again. */
  #onProbation(record: PairRecord, now: number): boolean {
    return record.level > 0 && now - record.quarantinedUntil < this.#options.maxMs;
  }

  /**
   * Forgets what no longer matters, so the records stay bounded by recent crashes: a shared
   * crash is remembered (for clearing its suspects) as long as it can keep one a suspect and
   * the quiet spell after, and a pair once it has been quiet for `maxMs` past all of it.
   */
  #prune(now: number): void {
    const { maxMs } = this.#options;
    for (const [id, crash] of this.#crashes) if (now - crash.at >= 2 * maxMs) this.#crashes.delete(id);
    for (const [key, record] of this.#pairs) {
      for (const [id, at] of record.unexplained) if (now - at >= 2 * maxMs) record.unexplained.delete(id);
      const quiet = record.unexplained.size === 0 && now - record.lastStrikeAt >= maxMs && now - record.suspectUntil >= maxMs;
      const forgiven = record.level === 0 || record.quarantinedUntil + maxMs < now;
      if (quiet && forgiven && record.quarantinedUntil <= now) {
        this.#pairs.delete(key);
        const ofTenant = this.#byTenant.get(record.tenant);
        ofTenant?.delete(record);
        if (ofTenant?.size === 0) this.#byTenant.delete(record.tenant);
      }
    }
  }
}

function keyOf(tenant: string, plugin: string): string {
  return JSON.stringify([tenant, plugin]);
}
