// Thrown by a tool body (or an executor such as the sandbox) to end its call with a chosen
// result code instead of TOOL_ERROR. It never leaves the pipeline: the execute stage turns
// it into a failure result, its words kept, host paths and stack frames taken out.
import { AirlockError } from './airlock-error.js';
import type { ResultCode } from './result-codes.js';

const marker = 'airlock.error.ToolCallError';
const symbol = Symbol.for(marker);

export class ToolCallError extends AirlockError {
  private readonly [symbol] = true; // read by isInstance
  declare readonly code: ResultCode;

  constructor(code: ResultCode, message: string, details: Record<string, unknown> = {}) {
    super(code, message, details);
    this.name = 'ToolCallError';
  }

  static override isInstance(value: unknown): value is ToolCallError {
    return AirlockError.hasMarker(value, marker);
  }
}
