// Host hooks typed to return synchronously (observers, isConcurrencySafe, projectContent,
// finalizeContent, a custom policy) can still be written `async`. What such a hook returns is
// not awaited, so a promise it rejects would reach Node's unhandledRejection and, by default,
// end the whole host process: every such return value passes through here.
import { types } from 'node:util';

/**
 * Attaches `onRejected` (by default: nothing) to `value` when it is a native promise, so its
 * rejection is handled. Anything else is left alone: only a native promise can be reported
 * unhandled, and reading `then` of anything else would run the host's getters. True when
 * `value` was a promise: an answer the hook's caller cannot use.
 */
export function containRejection(value: unknown, onRejected: (reason: unknown) => void = ignore): boolean {
  // A native check, any realm's promise, no getter run: every call's verdicts pass here, and
  // letting Promise.prototype.then throw for them cost 6 µs a call (an exception's stack).
  if (!types.isPromise(value)) return false;
  try {
    Promise.prototype.then.call(value, undefined, (reason: unknown) => {
      try {
        onRejected(reason);
      } catch {
        // A reporter that fails has no one left to tell.
      }
    });
  } catch {
    // A promise whose species constructor throws: nothing more can be attached.
  }
  return true;
}

function ignore(): void {}
