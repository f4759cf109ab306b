// Messages to one IPC peer: the first of an event-loop turn goes at once (a lone call pays no
// wait), and the rest of that turn's (the other calls of a turn, answers that finish
// together) cross the process boundary together at the turn's end, so a turn of ten calls
// pays two serializations, writes and wake-ups of the far side instead of ten. Order is
// kept: the far side handles them one after another.

/** What goes on the wire when more than one message was queued in a turn. */
export interface Batch<M> {
  readonly type: 'batch';
  readonly messages: readonly M[];
}

export class MessageOutbox<M> {
  readonly #write: (message: M | Batch<M>) => boolean;
  readonly #connected: () => boolean;
  #queued: M[] = [];
  #scheduled = false;

  /** `write` puts one message on the wire (false when it could not); `connected` says whether it still can. */
  constructor(write: (message: M | Batch<M>) => boolean, connected: () => boolean) {
    this.#write = write;
    this.#connected = connected;
  }

  /** Sends `message` now if it is the turn's first, else queues it for the turn's end; false when the peer is already gone. */
  send(message: M): boolean {
    if (!this.#connected()) return false;
    if (this.#scheduled) {
      this.#queued.push(message);
      return true;
    }
    this.#scheduled = true;
    // setImmediate, not a microtask: the calls of one turn reach here over several
    // microtask hops (admission, then the host), all before the loop's check phase.
    setImmediate(() => this.flush());
    this.#write(message);
    return true;
  }

  /** Sends what is queued now (a peer that has gone drops it: its exit settles every task). */
  flush(): void {
    this.#scheduled = false;
    const queued = this.#queued;
    if (queued.length === 0) return;
    this.#queued = [];
    this.#write(queued.length === 1 ? (queued[0] as M) : { type: 'batch', messages: queued });
  }
}

/** The messages one wire message carries, in order. */
export function unbatch<M>(message: M | Batch<M>): readonly M[] {
  return (message as { type?: unknown }).type === 'batch' ? (message as Batch<M>).messages : [message as M];
}
