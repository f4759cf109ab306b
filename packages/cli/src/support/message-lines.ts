// Standard input for the MCP stdio transport, passed on one message (line) at a time. The
// SDK's transport closes itself when its buffer passes 10 MiB: one oversized message from a
// client ended the whole server, calls in flight included. Here a line longer than the limit
// is dropped as it streams in (never held whole) and reported, and the server goes on. A
// blank line is no message: it is skipped, not answered as a parse error.
import { isUtf8 } from 'node:buffer';
import { Transform, type TransformCallback } from 'node:stream';

/** The largest message passed on, in bytes (the SDK's own default buffer). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
/** How much of a dropped message is kept to find its id in. */
const HEAD_BYTES = 4096;

/** A dropped message: its JSON-RPC id when its head names one before its params, null when a request's id cannot be read, undefined when it was no request. */
export interface Dropped {
  readonly id: string | number | null | undefined;
  readonly bytes: number;
  /** Too large, or not UTF-8 (decoded, U+FFFD would stand in an argument without a word, which `run` refuses). */
  readonly reason: 'too-large' | 'not-utf8';
}

export class MessageLines extends Transform {
  readonly #onDropped: (dropped: Dropped) => void;
  readonly #maxBytes: number;
  #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Bytes of the line being dropped so far, or -1 while the line is kept. */
  #dropping = -1;
  #head = Buffer.alloc(0);

  constructor(onDropped: (dropped: Dropped) => void, maxBytes = MAX_MESSAGE_BYTES) {
    super();
    this.#onDropped = onDropped;
    this.#maxBytes = maxBytes;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    let start = 0;
    for (;;) {
      const newline = chunk.indexOf(10, start);
      const piece = chunk.subarray(start, newline < 0 ? chunk.length : newline);
      if (this.#dropping >= 0) this.#dropping += piece.length;
      else if (this.#pendingBytes + piece.length > this.#maxBytes) {
        this.#head = Buffer.concat([...this.#pending, piece.subarray(0, HEAD_BYTES)]).subarray(0, HEAD_BYTES);
        this.#dropping = this.#pendingBytes + piece.length;
        this.#pending = [];
        this.#pendingBytes = 0;
      } else {
        this.#pending.push(piece);
        this.#pendingBytes += piece.length;
      }
      if (newline < 0) break;
      if (this.#dropping >= 0) {
        this.#onDropped({ id: idIn(this.#head.toString('utf8')), bytes: this.#dropping, reason: 'too-large' });
        this.#dropping = -1;
        this.#head = Buffer.alloc(0);
      } else if (!blank(this.#pending)) {
        this.#passOn();
      }
      this.#pending = [];
      this.#pendingBytes = 0;
      start = newline + 1;
    }
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.#dropping >= 0) this.#onDropped({ id: idIn(this.#head.toString('utf8')), bytes: this.#dropping, reason: 'too-large' });
    // Input ended after a last line with no newline: that line is the last message, not lost.
    else if (!blank(this.#pending)) this.#passOn();
    done();
  }

  /** The pending line, passed on when it is UTF-8, else dropped and reported. */
  #passOn(): void {
    const line = Buffer.concat([...this.#pending, NEWLINE]);
    if (isUtf8(line)) this.push(line);
    else this.#onDropped({ id: idIn(line.subarray(0, HEAD_BYTES).toString('utf8')), bytes: line.length - 1, reason: 'not-utf8' });
  }
}

const NEWLINE = Buffer.from('\n');

/** Whether a line holds nothing but JSON's whitespace (space, tab, CR): stops at the first other byte. */
function blank(pieces: readonly Buffer[]): boolean {
  for (const piece of pieces) for (const byte of piece) if (byte !== 0x20 && byte !== 0x09 && byte !== 0x0d) return false;
  return true;
}

/**
 * The request's id, read from the head of its text only where nothing can be mistaken for
 * it: a top-level "id" that comes before "params" (as clients write them). Otherwise null,
 * which JSON-RPC answers with when the id cannot be known; undefined for no request at all.
 */
function idIn(head: string): string | number | null | undefined {
  // Only a request is answered: a response (to our own request, say an elicitation) carries
  // an id from our numbering, and answering it would land on the client's request of that id.
  if (!/"method"\s*:/.test(head)) return undefined;
  const params = head.indexOf('"params"');
  const match = /^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*("(?:[^"\\]|\\.){0,200}"|-?\d{1,15})\s*[,}]/.exec(head);
  if (match === null || (params >= 0 && (match.index + match[0].length) > params)) return null;
  try {
    const id: unknown = JSON.parse(match[1] as string);
    return typeof id === 'string' || typeof id === 'number' ? id : null;
  } catch {
    return null;
  }
}
