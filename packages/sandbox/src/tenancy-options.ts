// The tenancy options of createSandbox (fair share, shards, quarantine), checked key by
// key: a bad value is an error naming its path, an unknown key is an error too.
import { SandboxError } from './errors/sandbox-error.js';
import { DEFAULT_QUARANTINE, type QuarantineOptions } from './host/crash-quarantine.js';
import { CLAIM_MS } from './admission/fair-share.js';

/** A claim longer than this would idle a thread for longer than it protects anything. */
const MAX_CLAIM_MS = 1000;

export interface FairShareSettings {
  /**
   * Relative weight per tenant (default 1 each). Under contention each waiting tenant's
   * share of the threads is proportional to its weight: a paying tier at 4 gets
   * four times the threads of a tenant at 1 while both have calls waiting.
   */
  readonly weights?: Readonly<Record<string, number>>;
  /**
   * Threads kept for tenants that have nothing running, so a light tenant's call starts at
   * once beside a hog that fills the pool. Default 1; 0 turns it off.
   */
  readonly reserveThreads?: number;
  /**
   * How long, in ms, a tenant whose last call just ended keeps its thread claimed against
   * tenants already running calls, so a tenant calling one call at a time is not crowded
   * onto the reserve between its calls. Default 10; 0 turns it off.
   */
  readonly claimMs?: number;
}

export interface QuarantineSettings {
  /** Crashes pinned on one tenant+plugin within `windowMs` that quarantine it. Default 3. */
  readonly crashes?: number;
  /** Default 60000. */
  readonly windowMs?: number;
  /** First quarantine, doubled on each repeat. Default 30000. */
  readonly baseMs?: number;
  /** Longest quarantine, and how long a released pair then runs on probation (alone). Default 900000 (15 minutes). */
  readonly maxMs?: number;
}

export interface TenancySettings {
  readonly weightOf: (tenant: string) => number;
  readonly reserveThreads: number;
  readonly claimMs: number;
  readonly processes: number;
  readonly quarantine: QuarantineOptions;
}

export const DEFAULT_PROCESSES = 2;
const MAX_PROCESSES = 64;
const MAX_WEIGHT = 1000;
const MAX_RESERVE = 16;

export function tenancySettings(options: {
  readonly mode?: unknown;
  readonly processes?: unknown;
  readonly fairShare?: unknown;
  readonly quarantine?: unknown;
  readonly maxConcurrentPerTenant?: unknown;
}): TenancySettings {
  if (options.maxConcurrentPerTenant !== undefined) {
    fail('options.maxConcurrentPerTenant was replaced by work-conserving fair share: remove it (a lone tenant now uses every idle thread), and use options.fairShare.weights to favour tenants');
  }
  if (options.processes !== undefined) {
    if (options.mode === 'in-process') fail('options.processes applies to process mode only (in-process mode has one pool, in this process)');
    if (!isIntegerIn(options.processes, 1, MAX_PROCESSES)) fail(`options.processes must be an integer from 1 to ${MAX_PROCESSES}`);
  }
  const fairShare = plainObject(options.fairShare, 'options.fairShare', ['weights', 'reserveThreads', 'claimMs']);
  const weights = new Map<string, number>();
  for (const [tenant, weight] of Object.entries(plainObject(fairShare.weights, 'options.fairShare.weights'))) {
    if (!(typeof weight === 'number' && Number.isFinite(weight) && weight > 0 && weight <= MAX_WEIGHT)) {
      fail(`options.fairShare.weights[${JSON.stringify(tenant)}] must be a number above 0 and at most ${MAX_WEIGHT}`);
    }
    weights.set(tenant, weight);
  }
  const reserveThreads = fairShare.reserveThreads ?? 1;
  if (!isIntegerIn(reserveThreads, 0, MAX_RESERVE)) fail(`options.fairShare.reserveThreads must be an integer from 0 to ${MAX_RESERVE}`);
  const claimMs = fairShare.claimMs ?? CLAIM_MS;
  if (!isIntegerIn(claimMs, 0, MAX_CLAIM_MS)) fail(`options.fairShare.claimMs must be an integer from 0 to ${MAX_CLAIM_MS}`);
  const given = plainObject(options.quarantine, 'options.quarantine', ['crashes', 'windowMs', 'baseMs', 'maxMs']);
  const quarantine = { ...DEFAULT_QUARANTINE };
  for (const key of ['crashes', 'windowMs', 'baseMs', 'maxMs'] as const) {
    const value = given[key];
    if (value === undefined) continue;
    const max = key === 'crashes' ? 100 : 24 * 3600 * 1000;
    if (!isIntegerIn(value, 1, max)) fail(`options.quarantine.${key} must be an integer from 1 to ${max}`);
    quarantine[key] = value;
  }
  if (quarantine.baseMs > quarantine.maxMs) fail('options.quarantine.baseMs must not exceed options.quarantine.maxMs');
  return {
    weightOf: (tenant) => weights.get(tenant) ?? 1,
    reserveThreads,
    claimMs,
    processes: (options.processes as number | undefined) ?? DEFAULT_PROCESSES,
    quarantine,
  };
}

function plainObject(value: unknown, path: string, keys?: readonly string[]): Record<string, unknown> {
  if (value === undefined) return {};
  if (typeof value !== 'object' || value === null || Array.isArray(value)) fail(`${path} must be an object`);
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (keys !== undefined && !keys.includes(key)) fail(`${path}.${key} is not an option (expected ${keys.join(', ')})`);
  }
  return record;
}

function isIntegerIn(value: unknown, min: number, max: number): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

function fail(message: string): never {
  throw new SandboxError('INVALID_OPTION', message);
}
