// The one place a thrown value becomes failure text the model reads. A ToolCallError is
// deliberate (a tool or the sandbox choosing its code and wording) and is kept as it is;
// anything else loses host paths and stack frames: a body's throw is TOOL_ERROR, a host
// hook's throw is quoted as the reason of its denial.
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
  if (ToolCallError.isInstance(thrown)) return { code: isResultCode(thrown.code) ? thrown.code : 'TOOL_ERROR', message: typeof thrown.message === 'string' ? thrown.message : messageOf(thrown) };
  return { code: 'TOOL_ERROR', message: toolErrorMessage(toolName, thrown) };
}
