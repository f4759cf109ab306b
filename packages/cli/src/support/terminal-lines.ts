// Lines typed at the terminal, one per question. Lines that arrive before a question is
// asked are kept for the next one (typed ahead, or sent by a script), never dropped; input
// is paused between questions so an idle reader does not keep the process alive. The
// terminal stays in its own line mode: it echoes and edits, and Ctrl-C stays a signal.
import { createInterface, type Interface } from 'node:readline';
import type { Readable } from 'node:stream';

export class TerminalLines {
  private reader: Interface | undefined;
  private readonly buffered: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private ended = false;

  constructor(private readonly input: Readable) {}

  /** The next line, or undefined at the end of input. Rejects when the signal aborts. */
  next(signal: AbortSignal): Promise<string | undefined> {
    if (this.buffered.length > 0) return Promise.resolve(this.buffered.shift());
    if (this.ended) return Promise.resolve(undefined);
    const reader = this.open();
    return new Promise((resolve, reject) => {
      const settle = (): void => {
        signal.removeEventListener('abort', onAbort);
        this.waiting = undefined;
        reader.pause();
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
      reader.resume();
    });
  }

  private open(): Interface {
    if (this.reader !== undefined) return this.reader;
    const reader = createInterface({ input: this.input, terminal: false, crlfDelay: Infinity });
    reader.on('line', (line) => (this.waiting === undefined ? this.buffered.push(line) : this.waiting(line)));
    reader.on('close', () => {
      this.ended = true;
      this.waiting?.(undefined);
    });
    this.reader = reader;
    return reader;
  }
}
