// Ctrl-C while plugins load or calls run: cancel what is running (the sandbox stops those
// bodies) and what has not started, keep what finished, and let the command print it and
// exit 130 (128 + SIGINT), the shell's convention for "interrupted". Until a command
// listens, bin.ts's listener ends the process with a word (exit 130).
export const INTERRUPTED_EXIT = 130;

/** How long cancelled calls get to come back as results before the command stops waiting. */
export const INTERRUPT_GRACE_MS = 3000;
/** How long after an interrupted run the same Ctrl-C's second delivery may still arrive. */
const DUPLICATE_SIGINT_MS = 1000;

export interface Interrupt {
  /** Aborts on the first SIGINT. */
  readonly signal: AbortSignal;
  /** Resolves on the first SIGINT, after the grace period: stop waiting for the run. */
  readonly givenUp: Promise<void>;
  dispose(): void;
}

export function onInterrupt(): Interrupt {
  const controller = new AbortController();
  let giveUp!: () => void;
  const givenUp = new Promise<void>((resolve) => (giveUp = resolve));
  let timer: ReturnType<typeof setTimeout> | undefined;
  // At a terminal Ctrl-C reaches this process twice (from the terminal's process group and
  // forwarded by the re-exec wrapper in bin.ts), so every SIGINT after the first is the same request.
  const handler = (): void => {
    if (controller.signal.aborted) return;
    controller.abort(new Error('interrupted (Ctrl-C)'));
    timer = setTimeout(giveUp, INTERRUPT_GRACE_MS);
    timer.unref();
  };
  process.on('SIGINT', handler);
  return {
    signal: controller.signal,
    givenUp,
    dispose() {
      clearTimeout(timer);
      if (!controller.signal.aborted) {
        process.off('SIGINT', handler);
        return;
      }
      // The copy of that Ctrl-C the wrapper forwards can arrive after the run ended: with
      // Node's default back it killed the process before the results were printed (exit 130,
      // nothing shown). Copies are swallowed a moment longer; a later Ctrl-C ends the process.
      const late = setTimeout(() => process.off('SIGINT', handler), DUPLICATE_SIGINT_MS);
      late.unref();
    },
  };
}
