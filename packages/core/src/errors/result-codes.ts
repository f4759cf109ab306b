// The stable failure codes a tool result may carry (DESIGN.md section 2).
// docs/errors.md documents each one; a test keeps the two in step.
export const RESULT_CODES = [
  'INVALID_ARGS',
  'UNKNOWN_TOOL',
  'PERMISSION_DENIED',
  'APPROVAL_UNAVAILABLE',
  'TIMEOUT',
  'CPU_LIMIT',
  'MEMORY_LIMIT',
  'OUTPUT_TOO_LARGE',
  'INVALID_TOOL_OUTPUT',
  'TOOL_ERROR',
  'SANDBOX_CRASH',
  'ABORTED_BEFORE_DISPATCH',
  'ABORTED',
] as const;

export type ResultCode = (typeof RESULT_CODES)[number];

const known: ReadonlySet<string> = new Set(RESULT_CODES);

export function isResultCode(value: unknown): value is ResultCode {
  return typeof value === 'string' && known.has(value);
}

/**
 * Thrown by a tool body (or an executor such as the sandbox) to end the call with a
 * specific code instead of TOOL_ERROR. The pipeline turns it into a failure result.
 */
export class ToolCallError extends Error {
  readonly code: ResultCode;
  constructor(code: ResultCode, message: string) {
    super(message);
    this.name = 'ToolCallError';
    this.code = code;
  }

  static isInstance(value: unknown): value is ToolCallError {
    return value instanceof ToolCallError ||
      (typeof value === 'object' && value !== null && (value as { name?: unknown }).name === 'ToolCallError' &&
        isResultCode((value as { code?: unknown }).code));
  }
}
