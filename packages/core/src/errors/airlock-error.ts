// Configuration and programming faults are thrown as AirlockError; failures of a
// tool call are never thrown across the pipeline, they become results (see result/).
const marker = Symbol.for('airlock.error');

export type AirlockErrorCode =
  | 'INVALID_TOOL_DEFINITION'
  | 'DUPLICATE_TOOL'
  | 'UNSUPPORTED_SCHEMA'
  | 'NOT_LOSSLESS_JSON'
  | 'INVALID_OPTION'
  | 'INVALID_PROVIDER_MESSAGE';

export class AirlockError extends Error {
  readonly [marker] = true;
  readonly code: AirlockErrorCode;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: AirlockErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'AirlockError';
    this.code = code;
    this.details = Object.freeze({ ...details });
  }

  /** Works across copies of the package (a bundled plugin host, a second install). */
  static isInstance(value: unknown): value is AirlockError {
    return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[marker] === true;
  }
}
