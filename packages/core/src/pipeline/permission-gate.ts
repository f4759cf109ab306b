// Stage 2: allow / deny / ask, decided by policy outside every tool. `ask` proceeds
// only on an explicit yes (the literal `true`) from the approver.
import { containRejection } from '../util/contain-rejection.js';
import type { JsonObject } from '../json/json-types.js';
import { hookFailureText } from '../result/thrown-failure.js';
import { linkAbortSignal } from '../util/merge-abort-signals.js';
import type { Approver } from './hooks.js';
import type { ParsedCall } from './parsed-call.js';
import type { PipelineConfig } from './pipeline-config.js';

export type GateOutcome =
  | { readonly allowed: true }
  | { readonly allowed: false; readonly code: 'PERMISSION_DENIED' | 'APPROVAL_UNAVAILABLE' | 'ABORTED_BEFORE_DISPATCH'; readonly message: string };

class ApprovalTimeout extends Error {}
const APPROVAL_TIMED_OUT = new ApprovalTimeout();

const ALLOWED: GateOutcome = Object.freeze({ allowed: true });

/** Synchronous unless an approver must be asked, so the common path costs no promise. */
export function permissionGate(config: PipelineConfig, call: ParsedCall, args: JsonObject, tenant: string | undefined, signal: AbortSignal): GateOutcome | Promise<GateOutcome> {
  // A custom policy is the host's code: what it returns is read here, where a throw (or no
  // verdict at all) is a denial that says the policy failed.
  let verdict: { readonly decision: unknown; readonly reason: string };
  try {
    const decided = config.policy.decide(call.name, args, tenant) as { decision?: unknown; reason?: unknown } | undefined;
    containRejection(decided); // an async policy answers a promise: no decision, so a denial
    const reason = decided?.reason;
    verdict = { decision: decided?.decision, reason: typeof reason === 'string' ? reason : 'the policy gave no reason' };
  } catch (error) {
    return { allowed: false, code: 'PERMISSION_DENIED', message: `${call.name}: denied because the permission policy failed (${hookFailureText(error)})` };
  }
  if (verdict.decision === 'allow') return ALLOWED;
  // The reason is the operator's own sentence or a description of its source, so it is quoted in parentheses, never spliced into ours.
  if (verdict.decision === 'deny') return { allowed: false, code: 'PERMISSION_DENIED', message: `${call.name}: denied (${verdict.reason})` };
  if (verdict.decision !== 'ask') return { allowed: false, code: 'PERMISSION_DENIED', message: `${call.name}: denied (the policy gave no decision)` };

  if (config.approver === undefined) {
    return { allowed: false, code: 'APPROVAL_UNAVAILABLE', message: `${call.name}: needs approval (${verdict.reason}) and no approver is available` };
  }
  return askApprover(config, config.approver, call, args, tenant, signal, verdict.reason);
}

async function askApprover(config: PipelineConfig, approver: Approver, call: ParsedCall, args: JsonObject, tenant: string | undefined, signal: AbortSignal, reason: string): Promise<GateOutcome> {
  const timeoutMs = config.limits.approvalTimeoutMs;
  // Detached at the end: AbortSignal.any would leave a dependant on a caller's signal that
  // outlives the call (Node 20 never prunes them), a little more memory per approval for good.
  const scope = linkAbortSignal(signal);
  const approvalSignal = scope.signal;
  let timer: ReturnType<typeof setTimeout> | undefined;
  try {
    const answer = await Promise.race([
      Promise.resolve().then(() => approver({ callId: call.callId, toolName: call.name, args, tenant, reason }, approvalSignal)),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(APPROVAL_TIMED_OUT), timeoutMs);
        approvalSignal.addEventListener('abort', () => reject(APPROVAL_TIMED_OUT), { once: true });
      }),
    ]);
    if (answer === true) return { allowed: true };
    if (answer === false) return { allowed: false, code: 'PERMISSION_DENIED', message: `${call.name}: the approver declined` };
    return { allowed: false, code: 'PERMISSION_DENIED', message: `${call.name}: the approver gave no explicit yes (answered ${describeAnswer(answer)})` };
  } catch (error) {
    // Cancelled while the question waited: the call never started, like any call cancelled before its body.
    if (signal.aborted) return { allowed: false, code: 'ABORTED_BEFORE_DISPATCH', message: `${call.name}: cancelled while waiting for approval` };
    // Compared by identity: instanceof runs a thrown Proxy's getPrototypeOf trap, which may throw.
    if (error === APPROVAL_TIMED_OUT) return { allowed: false, code: 'APPROVAL_UNAVAILABLE', message: `${call.name}: the approver did not answer within ${timeoutMs} ms` };
    return { allowed: false, code: 'APPROVAL_UNAVAILABLE', message: `${call.name}: the approver failed (${hookFailureText(error)})` };
  } finally {
    clearTimeout(timer);
    scope.abort(undefined);
    scope.dispose();
  }
}

function describeAnswer(answer: unknown): string {
  if (typeof answer === 'string') return JSON.stringify(answer.slice(0, 40));
  if (answer === null || answer === undefined || typeof answer === 'number' || typeof answer === 'boolean') return String(answer);
  return typeof answer;
}
