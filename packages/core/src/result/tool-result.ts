import type { ResultCode } from '../errors/result-codes.js';
import type { JsonValue } from '../json/json-types.js';

/** Resource accounting and other facts about a call, for hosts and observers (never the model). */
export type ResultMetadata = Readonly<Record<string, JsonValue>>;

interface ResultBase {
  readonly callId: string;
  readonly name: string;
  /** The text the model reads on its next turn. */
  readonly content: string;
  /** The call's own time, in milliseconds, without time spent waiting for an approver. */
  readonly durationMs: number;
  /** Milliseconds spent waiting for an approver's answer; present only when one was asked. */
  readonly approvalMs?: number;
  readonly metadata?: ResultMetadata;
}

export interface ToolSuccess extends ResultBase {
  readonly isError: false;
  readonly value: JsonValue;
}

export interface ToolFailure extends ResultBase {
  readonly isError: true;
  readonly error: { readonly code: ResultCode; readonly message: string };
}

export type ToolResult = ToolSuccess | ToolFailure;

/** The outcome before content is finalized: what `finalizeContent` receives. */
export type DraftResult =
  | { readonly isError: false; readonly value: JsonValue; readonly content: string }
  | { readonly isError: true; readonly error: { readonly code: ResultCode; readonly message: string }; readonly content: string };

export function failureContent(code: ResultCode, message: string): string {
  return `Error [${code}]: ${message}`;
}

/**
 * A failure: `message` for the host (error.message), and for the model's content the same or,
 * where the message names what only the host may know (a declared output schema, a size
 * limit), `modelMessage` instead.
 */
export function draftFailure(code: ResultCode, message: string, modelMessage = message): DraftResult {
  return { isError: true, error: { code, message }, content: failureContent(code, modelMessage) };
}
