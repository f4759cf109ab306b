// Leaving the NATS bus, for a host and an executor alike. While the server is down, a drain
// waits for a reconnect that may never come, or (nats.js, reconnecting) returns with the
// connection still open and reconnecting for ever: an outside tester's `airlock run
// --executors` printed its report and never exited. So a drain gets LEAVE_MS, and whatever it
// did, a connection still open after it is closed.
import type { NatsConnection } from 'nats';

/** How long leaving waits on the server (flush, drain) before it gives up and closes. */
export const LEAVE_MS = 2000;

/** Whether `work` settled (either way) within `ms`. */
export async function settledWithin(work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), ms)));
  try {
    return await Promise.race([work.then(() => true, () => false), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Drains `connection` (what it has to send goes out), then makes sure it is closed. */
export async function leaveBus(connection: NatsConnection): Promise<void> {
  if (!connection.isClosed()) await settledWithin(connection.drain(), LEAVE_MS);
  if (!connection.isClosed()) await connection.close().catch(() => undefined);
}
