// What a plugin gets when its manifest is silent, and the most it may ask for.
// Units are in the names: memoryMb (MiB of isolate heap), timeoutMs (wall clock per call),
// cpuMs (isolate CPU time per call), maxOutputBytes (UTF-8 bytes of the JSON result).
export interface PluginLimits {
  /** isolated-vm `memoryLimit`: approximate (2-7x overshoot seen), blind to WebAssembly memory. Minimum 8. */
  readonly memoryMb: number;
  /** Wall-clock deadline per call, enforced by the host: a promise that never settles is still stopped. */
  readonly timeoutMs: number;
  /** CPU time per call in the isolate, watched by the host (sync code, microtasks, getters, toJSON). */
  readonly cpuMs: number;
  /** Largest serialized result, checked inside the isolate before anything is copied out. */
  readonly maxOutputBytes: number;
}

export const DEFAULT_PLUGIN_LIMITS: PluginLimits = Object.freeze({ memoryMb: 64, timeoutMs: 5000, cpuMs: 1000, maxOutputBytes: 1024 * 1024 });
export const HOST_LIMIT_CAPS: PluginLimits = Object.freeze({ memoryMb: 512, timeoutMs: 60_000, cpuMs: 30_000, maxOutputBytes: 8 * 1024 * 1024 });
export const MIN_MEMORY_MB = 8;
