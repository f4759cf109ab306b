import type { RegisteredTool } from '../registry/tool-registry.js';
import type { JsonObject } from '../json/json-types.js';

/** A call after the parse stage: either ready to run or already failed. */
export interface ParsedCall {
  readonly index: number;
  readonly callId: string;
  readonly name: string;
  readonly tool: RegisteredTool | undefined;
  readonly args: JsonObject | undefined;
  readonly failure: { readonly code: 'INVALID_ARGS' | 'UNKNOWN_TOOL'; readonly message: string } | undefined;
}
