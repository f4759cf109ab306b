// What one HTTP client can make `airlock serve` hold in memory, bounded for every client at
// once: bodies of requests in progress (a body is read whole before any session limit applies,
// so 150 connections each holding 4 MiB less a byte took the server from 100 to 690 MB), and
// responses the client does not read (a tenant posting calls with 1 MB results over sockets
// it never read took the server to 1.2 GB in 30 s: outside testers' finds).
import type { ServerResponse } from 'node:http';

/** Bytes of request bodies all requests in progress may have the server hold at once. */
export const MAX_BODY_BYTES_IN_READING = 64 * 1024 * 1024;
/**
 * A response with bytes waiting for its client, who took none of them for this long, is
 * closed: the MCP SDK queues each result in the response's stream whatever the client reads
 * (the socket sees only what the stream lets through), so the time without progress is what
 * tells a client that stopped reading, and the queue behind is dropped with the stream. An
 * idle stream has nothing waiting. Progress is seen only when the kernel takes more, which
 * it does once a third or so of its send buffer (up to a few MB on loopback) has drained: at
 * 3 s, a client reading 250 KB/s was taken for one that stopped (an outside tester's find);
 * at 15 s, any client reading more than about 100 KB/s is seen reading.
 */
const UNREAD_STALL_MS = 15_000;
/** How often responses are checked for unread bytes. */
const SWEEP_MS = 500;

/**
 * Bytes of request bodies held at once, in all and per tenant: a tenant holding its share
 * (a quarter) cannot make the others' requests fail, as one tenant holding the whole budget
 * did (an outside tester's find). A request's bytes are held until its response closes, not
 * only while its body is read: the body parsed is many times its size (`[{},{},...]` about
 * 20x), and is held while its calls run.
 */
export class BodyBudget {
  #held = 0;
  readonly #byTenant = new Map<string, number>();

  constructor(readonly maxBytes: number = MAX_BODY_BYTES_IN_READING, readonly tenantBytes: number = maxBytes / 4) {}

  /** What one request's body may take, charged to its tenant and given back once `res` closes. */
  forRequest(tenant: string, res: { once(event: 'close', listener: () => void): unknown }): (bytes: number) => boolean {
    let taken = 0;
    res.once('close', () => {
      this.#held -= taken;
      const left = (this.#byTenant.get(tenant) ?? 0) - taken;
      if (left <= 0) this.#byTenant.delete(tenant);
      else this.#byTenant.set(tenant, left);
      taken = 0;
    });
    return (bytes) => {
      const tenantHeld = this.#byTenant.get(tenant) ?? 0;
      if (this.#held + bytes > this.maxBytes || tenantHeld + bytes > this.tenantBytes) return false;
      this.#held += bytes;
      this.#byTenant.set(tenant, tenantHeld + bytes);
      taken += bytes;
      return true;
    };
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
        // What the kernel took: bytesWritten counts bytes still in the socket's own buffer too,
        // so a slow reader draining that buffer looked stalled (an outside tester's find).
        const socket = res.socket;
        const sent = socket === null ? seen.sent : socket.bytesWritten - socket.writableLength;
        const moved = sent !== seen.sent;
        seen.sent = sent;
        if (res.writableLength + (socket?.writableLength ?? 0) === 0 || moved) {
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
