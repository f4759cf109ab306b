// Faults of configuration or loading (a bad manifest, a broken plugin) are thrown; faults
// of a call are results. Each error lists every problem found, not just the first.
import { AirlockError, type ErrorCode } from '@airlock/core';

const marker = 'airlock.error.SandboxError';
const symbol = Symbol.for(marker);

/** The codes of the one catalogue (ERROR_CODES in @airlock/core) a sandbox throws. */
export type SandboxErrorCode = Extract<ErrorCode, 'INVALID_OPTION' | 'INVALID_PLUGIN' | 'DUPLICATE_TOOL' | 'NO_PLUGINS' | 'SNAPSHOT_FLAG_MISSING' | 'SANDBOX_CLOSED' | 'ENGINE_UNREACHABLE'>;

export class SandboxError extends AirlockError {
  private readonly [symbol] = true; // read by isInstance
  declare readonly code: SandboxErrorCode;
  /** Every problem found, each naming where it is (`limits.memoryMb must be ...`); also `details.problems`. */
  readonly problems: readonly string[];

  constructor(code: SandboxErrorCode, message: string, problems: readonly string[] = [message]) {
    const listed = Object.freeze([...problems]);
    super(code, message, { problems: listed });
    this.name = 'SandboxError';
    this.problems = listed;
  }

  static override isInstance(value: unknown): value is SandboxError {
    return AirlockError.hasMarker(value, marker);
  }
}
