// Observers watch the pipeline and can never change or break a call: each runs in its own
// try, and what one throws (or, written async, rejects) is reported to onError. onError's own failures are dropped:
// there is nowhere left to report them.
import { AirlockError } from '../errors/airlock-error.js';
import { containRejection } from '../util/contain-rejection.js';
import { messageOf } from '../util/sanitize-message.js';
import type { ContainedErrorContext, PipelineObservers } from './hooks.js';
import type { PipelineStage } from './stage-order.js';

export function emitStage(observers: PipelineObservers, callId: string, stage: PipelineStage, tenant: string | undefined): void {
  const onStage = observers.onStage;
  if (onStage === undefined) return;
  try {
    containRejection(onStage({ callId, stage }), (error) => reportObserverFailure(observers, 'onStage', error, callId, tenant));
  } catch (error) {
    reportObserverFailure(observers, 'onStage', error, callId, tenant);
  }
}

/** Calls one observer with its event; a throw is reported, never propagated. */
export function notifyObserver<E>(observers: PipelineObservers, name: 'onResult' | 'onLateSettlement', observer: ((event: E) => void) | undefined, event: E, callId: string, tenant: string | undefined): void {
  if (observer === undefined) return;
  try {
    containRejection(observer(event), (error) => reportObserverFailure(observers, name, error, callId, tenant));
  } catch (error) {
    reportObserverFailure(observers, name, error, callId, tenant);
  }
}

function reportObserverFailure(observers: PipelineObservers, observer: 'onResult' | 'onStage' | 'onLateSettlement', error: unknown, callId: string, tenant: string | undefined): void {
  reportError(observers, 'OBSERVER_FAILED', `the ${observer} observer threw: ${messageOf(error)}`, error, { source: 'observer', observer, callId, tenant });
}

/**
 * A failure the pipeline contained (the call or turn still gets its results) handed to
 * onError as an AirlockError whose `cause` is what was thrown and whose `details` repeat the context.
 */
export function reportError(observers: PipelineObservers, code: 'PRESCHEDULE_FAILED' | 'SCHEDULER_FAILED' | 'OBSERVER_FAILED', message: string, cause: unknown, context: ContainedErrorContext): void {
  const onError = observers.onError;
  if (onError === undefined) return;
  try {
    containRejection(onError(new AirlockError(code, message, { ...context }, { cause }), context));
  } catch {
    // See the file comment: an observer of failures that fails has no one left to tell.
  }
}
