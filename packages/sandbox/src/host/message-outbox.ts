// Messages to one IPC peer, sent together once per event-loop turn: the calls of a turn
// (and the answers that finish together) cross the process boundary in one message, not
// one each, so a turn of ten calls pays one serialization, one write and one wake-up of
// the far side instead of ten. Order is kept: the far side handles them one after another.

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

  /** Queues `message` for the end of this turn; false when the peer is already gone. */
  send(message: M): boolean {
    if (!this.#connected()) return false;
    this.#queued.push(message);
    if (!this.#scheduled) {
      this.#scheduled = true;
      // setImmediate, not a microtask: the calls of one turn reach here over several
      // microtask hops (admission, then the host), all before the loop's check phase.
      setImmediate(() => this.flush());
    }
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
