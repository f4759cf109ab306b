// The bench's raw process-pool baseline, started again when its child process dies.

export type ProcessPool = { readonly run: (how?: { readonly async?: boolean; readonly count?: number }) => Promise<unknown>; close(): Promise<void> };

/** Times the raw baseline's child may die (a crash of isolated-vm under load) and be started again. */
const MAX_BASELINE_RESTARTS = 3;

/**
 * The raw pool, started again when its child dies: under heavy load isolated-vm 5 once
 * crashed it (SIGSEGV) mid-run, and the whole bench failed on a baseline that has none of
 * Airlock in it. The call it was running is run again on the new child (its time, restart
 * included, falls in one round, which the rounds' median reads past). A child that keeps
 * dying still fails the bench.
 */
export async function respawning(open: () => Promise<ProcessPool>): Promise<ProcessPool> {
  let pool = await open();
  let reopening: Promise<ProcessPool> | undefined;
  let restarts = 0;
  const isDeath = (error: unknown): boolean => error instanceof Error && error.message.startsWith('the raw process-pool baseline exited');
  return {
    async run(how) {
      for (;;) {
        const ranOn = pool;
        try {
          return await ranOn.run(how);
        } catch (error) {
          if (!isDeath(error)) throw error;
          // Calls in flight on the dead child all land here: the first starts the next, the others wait for it.
          if (reopening !== undefined) await reopening;
          else if (pool === ranOn) {
            if (restarts >= MAX_BASELINE_RESTARTS) throw error;
            restarts += 1;
            process.stderr.write(`airlock bench: ${(error as Error).message}; started it again (${restarts} of ${MAX_BASELINE_RESTARTS})\n`);
            reopening = open();
            try {
              pool = await reopening;
            } finally {
              reopening = undefined;
            }
          }
        }
      }
    },
    close: () => pool.close(),
  };
}
