// Lines typed at the terminal, one per question. A line answers only a question already on
// the screen: whatever arrives while none is asked (typed ahead, a double Enter, the rest
// of a paste) is read and dropped, so it can never approve a call the person has not seen.
// Input is read from `listen()` on, but holds the process open only while a question waits.
// The terminal stays in its own line mode: it echoes and edits, and Ctrl-C stays a signal.
import { createInterface, type Interface } from 'node:readline';
import type { Readable } from 'node:stream';

/** A TTY stream is a socket: ref and unref decide whether it keeps the process alive. */
interface Refable {
  ref?: () => void;
  unref?: () => void;
}

export class TerminalLines {
  private reader: Interface | undefined;
  private waiting: ((line: string | undefined) => void) | undefined;
  private ended = false;

  constructor(private readonly input: Readable) {}

  /** Starts reading now: lines typed before the first question are dropped too. */
  listen(): void {
    this.open();
  }

  /** The next line typed after this call, or undefined at the end of input. Rejects when the signal aborts. */
  next(signal: AbortSignal): Promise<string | undefined> {
    if (this.ended) return Promise.resolve(undefined);
    this.open();
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.waiting = undefined;
        (this.input as Refable).unref?.();
      };
      const onAbort = (): void => {
        settle();
        reject(signal.reason instanceof Error ? signal.reason : new Error('the question was withdrawn'));
      };
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      this.waiting = (line) => {
        settle();
        resolve(line);
      };
      (this.input as Refable).ref?.();
    });
  }

  private open(): Interface {
    if (this.reader !== undefined) return this.reader;
    const reader = createInterface({ input: this.input, terminal: false, crlfDelay: Infinity });
    // No question waits: the line was typed before one was shown, and answers nothing.
    reader.on('line', (line) => this.waiting?.(line));
    reader.on('close', () => {
      this.ended = true;
      this.waiting?.(undefined);
    });
    // Reading all along (so nothing typed early is kept for a later question), without keeping the process alive.
    (this.input as Refable).unref?.();
    this.reader = reader;
    return reader;
  }
}
