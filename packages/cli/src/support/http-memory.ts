// What one HTTP client can make `airlock serve` hold in memory, bounded for every client at
// once: request bodies being read (a body is read whole before any session limit applies,
// so 150 connections each holding 4 MiB less a byte took the server from 100 to 690 MB), and
// responses the client does not read (a tenant posting calls with 1 MB results over sockets
// it never read took the server to 1.2 GB in 30 s: outside testers' finds).
import type { ServerResponse } from 'node:http';

/** Bytes of request bodies all connections may have the server hold at once. */
export const MAX_BODY_BYTES_IN_READING = 64 * 1024 * 1024;
/**
 * A response with bytes waiting for its client, who took none of them for this long, is
 * closed: the MCP SDK queues each result in the response's stream whatever the client reads
 * (the socket sees only what the stream lets through), so the time without progress is what
 * tells a client that stopped reading, and the queue behind is dropped with the stream. A
 * client reading slowly makes progress; an idle stream has nothing waiting.
 */
const UNREAD_STALL_MS = 3000;
/** How often responses are checked for unread bytes. */
const SWEEP_MS = 500;

/** A count of body bytes held across connections: a read that would pass it is refused. */
export class BodyBudget {
  #held = 0;

  constructor(readonly maxBytes: number = MAX_BODY_BYTES_IN_READING) {}

  /** Takes `bytes` for a body being read; false (and nothing taken) if that would pass the bound. */
  take(bytes: number): boolean {
    if (this.#held + bytes > this.maxBytes) return false;
    this.#held += bytes;
    return true;
  }

  give(bytes: number): void {
    this.#held -= bytes;
  }
}

/**
 * Responses in progress, closed once a client leaves one unread (see above): the calls behind
 * it are answered into a closed stream, whose data is dropped.
 */
export class UnreadResponses {
  /** Per response: the socket's bytes sent at the last sweep, and since when it has sent none while bytes wait. */
  readonly #open = new Map<ServerResponse, { sent: number; stalledSince: number | undefined; closing: (() => void) | undefined }>();
  readonly #timer: ReturnType<typeof setInterval>;

  constructor(onClosed: (res: ServerResponse) => void) {
    this.#timer = setInterval(() => {
      const now = performance.now();
      for (const [res, seen] of this.#open) {
        const sent = res.socket?.bytesWritten ?? seen.sent;
        const moved = sent !== seen.sent;
        seen.sent = sent;
        if (res.writableLength === 0 || moved) {
          seen.stalledSince = undefined;
          continue;
        }
        seen.stalledSince ??= now;
        if (now - seen.stalledSince < UNREAD_STALL_MS) continue;
        this.#open.delete(res);
        onClosed(res);
        seen.closing?.();
        res.destroy();
      }
    }, SWEEP_MS);
    this.#timer.unref();
  }

  /** `closing`: what else to do when this response is closed as unread (its calls cancelled). */
  watch(res: ServerResponse, closing?: () => void): void {
    const seen = this.#open.get(res);
    if (seen !== undefined) return void (seen.closing = closing);
    this.#open.set(res, { sent: 0, stalledSince: undefined, closing });
    res.once('close', () => this.#open.delete(res));
  }

  stop(): void {
    clearInterval(this.#timer);
  }
}
