// The one place a thrown value becomes failure text the model reads. A ToolCallError is
// deliberate (a tool or the sandbox choosing its code and wording) and keeps its code and
// words; every message loses host paths and stack frames and is bounded: a body's throw is
// TOOL_ERROR, a host hook's throw is quoted as the reason of its denial.
import type { ResultCode } from '../errors/result-codes.js';
import { ToolCallError } from '../errors/tool-call-error.js';
import { messageOf, sanitizeMessage } from '../util/sanitize-message.js';
import { isResultCode } from '../errors/result-codes.js';

/** `${prefix}: ` and the thrown value's message, sanitized. */
export function toolErrorMessage(prefix: string, thrown: unknown): string {
  return `${prefix}: ${sanitizeMessage(messageOf(thrown))}`;
}

/** What a host hook (the policy, a guard, the approver) threw, sanitized, for a reason in parentheses. */
export function hookFailureText(thrown: unknown): string {
  return sanitizeMessage(messageOf(thrown), undefined, 'no message');
}

/** What a tool body's throw means: its own code when it chose one, else TOOL_ERROR. */
export function thrownFailure(toolName: string, thrown: unknown): { readonly code: ResultCode; readonly message: string } {
  // A code outside the catalogue (from untyped JavaScript) is no code a model or operator can read: TOOL_ERROR.
  // Its message too may be anything in untyped JavaScript: the result's message is always text.
  // Its wording is kept, but not host paths, stack frames or unbounded length: a trusted tool
  // rethrowing a file system error as its own would hand the model the host's paths.
  if (ToolCallError.isInstance(thrown)) return { code: isResultCode(thrown.code) ? thrown.code : 'TOOL_ERROR', message: sanitizeMessage(typeof thrown.message === 'string' ? thrown.message : messageOf(thrown)) };
  return { code: 'TOOL_ERROR', message: toolErrorMessage(toolName, thrown) };
}
