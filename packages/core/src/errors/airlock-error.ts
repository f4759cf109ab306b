// The one branded base of every error Airlock throws, in every package (the AI SDK's
// AISDKError is the model). Configuration and programming faults are thrown; failures of a
// tool call are never thrown across the pipeline, they become results (see result/).
import type { ErrorCode } from './error-codes.js';
import type { ResultCode } from './result-codes.js';

const marker = 'airlock.error';
const symbol = Symbol.for(marker);

/** ERROR_CODES, plus the RESULT_CODES a ToolCallError carries. */
export type AirlockErrorCode = ErrorCode | ResultCode;

export class AirlockError extends Error {
  private readonly [symbol] = true; // read by isInstance
  /** Stable: part of the public contract, listed in docs/errors.md. */
  readonly code: AirlockErrorCode;
  /** The facts behind the message as data (the option path, the tool, every problem found). */
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: AirlockErrorCode, message: string, details: Record<string, unknown> = {}, options: { readonly cause?: unknown } = {}) {
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'AirlockError';
    this.code = code;
    this.details = Object.freeze({ ...details });
  }

  /** Any Airlock error, subclasses included; works across copies of the package (a bundled host, a second install). */
  static isInstance(value: unknown): value is AirlockError {
    return AirlockError.hasMarker(value, marker);
  }

  /** For subclasses: each brands its instances with `Symbol.for(<its marker>)`. */
  protected static hasMarker(value: unknown, markerName: string): boolean {
    if (typeof value !== 'object' || value === null) return false;
    try {
      return (value as Record<symbol, unknown>)[Symbol.for(markerName)] === true;
    } catch {
      return false; // a thrown Proxy or getter: no error of ours, whatever its trap says
    }
  }
}
