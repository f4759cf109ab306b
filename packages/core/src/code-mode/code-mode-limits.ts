// Code Mode's limits, with the unit in each name. The isolate ones (cpuMs, memoryMb,
// timeoutMs, maxOutputBytes) are enforced by the runner's host; the sub-call ones by
// the dispatcher on the host, whatever the program does.
import { AirlockError } from '../errors/airlock-error.js';

export interface CodeModeLimits {
  /** CPU time of the program itself, ms (sub-calls run elsewhere and are not counted). Default 1000. */
  readonly cpuMs: number;
  /** Heap of the program's isolate, MiB. Default 64. */
  readonly memoryMb: number;
  /** Wall clock of the whole program, sub-calls and approvals included, ms. Default 30000. */
  readonly timeoutMs: number;
  /** UTF-8 bytes of the program's result JSON, and of the content the model reads. Default 64 KiB. */
  readonly maxOutputBytes: number;
  /** Tool calls one program may make in all; past it each call is refused with TOO_MANY_CALLS. Default 50. */
  readonly maxCalls: number;
  /** Tool calls of one program waiting for their results at once (at most 16). Default 10, the scheduler's own parallel bound. */
  readonly maxCallsInFlight: number;
  /** Longest program, in characters. Default 65536. */
  readonly maxCodeChars: number;
}

export const DEFAULT_CODE_MODE_LIMITS: CodeModeLimits = Object.freeze({
  cpuMs: 1000,
  memoryMb: 64,
  timeoutMs: 30_000,
  maxOutputBytes: 64 * 1024,
  maxCalls: 50,
  maxCallsInFlight: 10,
  maxCodeChars: 64 * 1024,
});

/** The sandbox's own bound on capability requests waiting at once; sub-calls travel that way. */
export const MAX_CODE_MODE_CALLS_IN_FLIGHT = 16;

/** Defaults filled in, each value checked; throws INVALID_OPTION naming the path. */
export function codeModeLimits(given: Partial<CodeModeLimits> | undefined, path = 'options.limits'): CodeModeLimits {
  if (given !== undefined && (typeof given !== 'object' || given === null)) throw new AirlockError('INVALID_OPTION', `${path} must be an object`, { path });
  for (const key of Object.keys(given ?? {})) {
    if (!Object.hasOwn(DEFAULT_CODE_MODE_LIMITS, key)) throw new AirlockError('INVALID_OPTION', `${path}.${key} is not a Code Mode limit (${Object.keys(DEFAULT_CODE_MODE_LIMITS).join(', ')})`, { path: `${path}.${key}` });
  }
  const limits: CodeModeLimits = { ...DEFAULT_CODE_MODE_LIMITS, ...given };
  for (const key of Object.keys(DEFAULT_CODE_MODE_LIMITS) as (keyof CodeModeLimits)[]) {
    const value = limits[key];
    if (typeof value !== 'number' || !Number.isInteger(value) || value <= 0) throw new AirlockError('INVALID_OPTION', `${path}.${key} must be a positive integer`, { path: `${path}.${key}` });
  }
  if (limits.maxCallsInFlight > MAX_CODE_MODE_CALLS_IN_FLIGHT) {
    throw new AirlockError('INVALID_OPTION', `${path}.maxCallsInFlight must be at most ${MAX_CODE_MODE_CALLS_IN_FLIGHT}`, { path: `${path}.maxCallsInFlight` });
  }
  return Object.freeze(limits);
}
