// Faults of configuration or loading (a bad manifest, a broken plugin) are thrown;
// faults of a call are results. Each error lists every problem found, not just the first.
const marker = Symbol.for('airlock.sandbox.error');

export type SandboxErrorCode = 'INVALID_OPTION' | 'INVALID_PLUGIN' | 'DUPLICATE_TOOL' | 'NO_PLUGINS' | 'SNAPSHOT_FLAG_MISSING' | 'SANDBOX_CLOSED' | 'ENGINE_UNREACHABLE';

export class SandboxError extends Error {
  readonly [marker] = true;
  readonly code: SandboxErrorCode;
  /** Every problem found, each naming where it is (`limits.memoryMb must be ...`). */
  readonly problems: readonly string[];

  constructor(code: SandboxErrorCode, message: string, problems: readonly string[] = [message]) {
    super(message);
    this.name = 'SandboxError';
    this.code = code;
    this.problems = Object.freeze([...problems]);
  }

  static isInstance(value: unknown): value is SandboxError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
