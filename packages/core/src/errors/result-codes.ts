// The stable failure codes a tool result may carry (DESIGN.md section 2).
// docs/errors.md documents each one; a test keeps the two in step.
export const RESULT_CODES = Object.freeze([
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
] as const);

export type ResultCode = (typeof RESULT_CODES)[number];

const known: ReadonlySet<string> = new Set(RESULT_CODES);

export function isResultCode(value: unknown): value is ResultCode {
  return typeof value === 'string' && known.has(value);
}
