import type { RegisteredTool } from '../registry/tool-registry.js';
import type { JsonObject } from '../json/json-types.js';

/** A call after the parse stage: either ready to run or already failed. */
export interface ParsedCall {
  readonly index: number;
  readonly callId: string;
  readonly name: string;
  readonly tool: RegisteredTool | undefined;
  readonly args: JsonObject | undefined;
  /** ABORTED_BEFORE_DISPATCH: the turn was cancelled before its arguments were read. TOOL_ERROR: a zod-authored tool's own parse failed on arguments its JSON Schema accepted (validation/zod-arguments.ts). */
  readonly failure: { readonly code: 'INVALID_ARGS' | 'UNKNOWN_TOOL' | 'TOOL_ERROR' | 'ABORTED_BEFORE_DISPATCH'; readonly message: string } | undefined;
}
