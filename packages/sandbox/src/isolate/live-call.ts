// One sandboxed call as its realm sees it: a token the realm quotes in every message, the
// capability requests it made, and the tasks the host started in its isolate. The call is
// over only when the realm has reported *and* every such task has settled: the isolate is
// then idle, and since the host starts nothing more for this call, no code of it runs again.
import type ivm from './ivm.js';
import { countContainers, MAX_RESULT_CONTAINERS } from './json-containers.js';
import { logLineOfJson } from '../capabilities/log-line.js';
import type { CapabilityHandler } from '../worker/worker-protocol.js';

/** Largest JSON a capability request or answer may carry, in UTF-8 bytes. */
export const MAX_CAPABILITY_BYTES = 1024 * 1024;
/** Capability requests one call may make; past this each is refused. */
export const MAX_CAPABILITY_REQUESTS = 1000;
/**
 * Requests of one call waiting for their answers at once, and the bytes they carry. Each one
 * in flight is a copy held by the embedder: without these, one call that fired a thousand
 * 1 MiB requests at a slow capability held gigabytes there (and aborted it).
 */
export const MAX_CAPABILITY_IN_FLIGHT = 16;
export const MAX_CAPABILITY_BYTES_IN_FLIGHT = 4 * 1024 * 1024;
/**
 * What one call's requests may carry in all. Each is copied to the embedder's main thread,
 * which every tenant shares, and parsed there: a thousand requests of 100,000 empty objects
 * each held it for seconds a call. In all, ten results' worth of objects and arrays, and
 * 64 MiB (a megabyte of plain text parses in about a millisecond).
 */
export const MAX_CAPABILITY_CONTAINERS_PER_CALL = 1_000_000;
export const MAX_CAPABILITY_BYTES_PER_CALL = 64 * 1024 * 1024;

/** Lines of a plugin's console one call may send, and their bytes; past either, lines are counted, not kept. */
export const MAX_LOG_LINES = 100;
export const MAX_LOG_BYTES = 16 * 1024;
const LOG_LEVELS: ReadonlySet<string> = new Set(['debug', 'info', 'warn', 'error']);

export interface LogLine {
  readonly level: 'debug' | 'info' | 'warn' | 'error';
  readonly message: string;
}

/** What the realm reported: a kind the bootstrap chose, and its payload (result JSON or a message). */
export interface CallReport {
  readonly kind: string;
  readonly payload: string;
}

export interface LiveCallOptions {
  readonly token: string;
  readonly isolate: ivm.Isolate;
  readonly granted: ReadonlySet<string>;
  readonly capabilities: CapabilityHandler | undefined;
  /** Starts a task in the call's realm (arguments for the bootstrap's entry), under the call's watch. */
  readonly start: (args: readonly unknown[]) => Promise<unknown>;
}

export class LiveCall {
  readonly token: string;
  /** Settles once the realm reported and the isolate has nothing of this call left to run. */
  readonly finished: Promise<CallReport>;
  readonly #options: LiveCallOptions;
  #report: CallReport | undefined;
  #tasks = 0;
  #requests = 0;
  #unanswered = 0;
  #nativeUnits = 0;
  #bytesInFlight = 0;
  /** What the requests forwarded to the host carried, in all (MAX_CAPABILITY_*_PER_CALL). */
  #bytesSent = 0;
  #containersSent = 0;
  readonly #logs: LogLine[] = [];
  #logBytes = 0;
  #logsDropped = 0;
  /** Capability answers are delivered only while this holds: until the report, or the end. */
  #open = true;
  #resolve!: (report: CallReport) => void;
  #reject!: (error: unknown) => void;

  constructor(options: LiveCallOptions) {
    this.#options = options;
    this.token = options.token;
    this.finished = new Promise<CallReport>((resolve, reject) => {
      this.#resolve = resolve;
      this.#reject = reject;
    });
    this.finished.catch(() => undefined); // raced by the runner, which observes it
  }

  /** Capability requests the realm made while the call ran, refused ones included. */
  get requests(): number {
    return this.#requests;
  }

  /** Capability requests the host has not answered into the realm (left pending there for ever). */
  get unanswered(): number {
    return this.#unanswered;
  }

  /** Native units the call's realm made while it ran (Intl objects, WebAssembly memories: realm-bootstrap.ts): memory the heap does not show. */
  get nativeUnits(): number {
    return this.#nativeUnits;
  }

  countNativeUnits(count: number): void {
    if (Number.isSafeInteger(count) && count > 0) this.#nativeUnits += count;
  }

  /**
   * Follows a task the host started in this call's isolate. A rejection counts only when the
   * isolate is gone (killed or out of memory); otherwise it is a promise the plugin left
   * rejected, which isolated-vm reports through the task, and the call goes on (a task
   * stopped at its timeout is the watchdog's to judge, and rejects once it killed).
   */
  track(task: Promise<unknown>): void {
    this.#tasks += 1;
    const settle = (): void => {
      this.#tasks -= 1;
      this.#maybeFinish();
    };
    task.then((answer: unknown) => {
      // A call whose tool returned at once answers in the task itself: "kind\u0000payload".
      if (typeof answer === 'string') {
        const cut = answer.indexOf('\u0000');
        if (cut > 0) this.report(answer.slice(0, cut), answer.slice(cut + 1));
      }
      settle();
    }, (error: unknown) => {
      if (this.#options.isolate.isDisposed) this.#reject(error);
      else settle();
    });
  }

  /**
   * Follows the task that started the call. When isolated-vm rejects it for a promise the
   * plugin left rejected, an answer the tool gave at once was lost with it: collect it.
   */
  trackEntry(task: Promise<unknown>): void {
    this.track(task.catch((error: unknown) => {
      if (this.#options.isolate.isDisposed || this.#report !== undefined) throw error;
      return this.#options.start(['collect', this.token]);
    }));
  }

  report(kind: string, payload: string): void {
    if (this.#report !== undefined) return;
    this.#report = { kind, payload };
    this.#open = false;
    this.#maybeFinish();
  }

  /**
   * A line of the plugin's console, or of a log capability request: kept while the call runs
   * and within its bounds, in the order the realm sent them (one channel carries both).
   */
  log(level: string, message: string): void {
    if (!this.#open || !LOG_LEVELS.has(level)) return;
    const bytes = Buffer.byteLength(message, 'utf8');
    if (this.#logs.length >= MAX_LOG_LINES || this.#logBytes + bytes > MAX_LOG_BYTES) {
      this.#logsDropped += 1;
      return;
    }
    this.#logBytes += bytes;
    this.#logs.push({ level: level as LogLine['level'], message });
  }

  /** Console lines the realm counted past the bounds and never sent (realm-bootstrap.ts). */
  countDroppedLogs(count: number): void {
    if (Number.isSafeInteger(count) && count > 0) this.#logsDropped += count;
  }

  /** Capability requests the realm refused before their copy (past the bounds above): each counts as a request. */
  countRefusedRequests(count: number): void {
    if (Number.isSafeInteger(count) && count > 0) this.#requests += count;
  }

  /** The console lines kept, and how many were dropped past the bounds. */
  logs(): { readonly lines: readonly LogLine[]; readonly dropped: number } {
    return { lines: this.#logs, dropped: this.#logsDropped };
  }

  /** The call is over: nothing more is delivered into its realm, whatever answers later. */
  end(): void {
    this.#open = false;
  }

  request(id: number, name: string, json: string): void {
    if (!this.#open) return;
    this.#requests += 1;
    const handler = this.#options.capabilities;
    if (this.#requests > MAX_CAPABILITY_REQUESTS) return this.#deliver(id, false, 'TOO_MANY_REQUESTS');
    if (handler === undefined || !this.#options.granted.has(name)) return this.#deliver(id, false, 'NOT_GRANTED');
    // UTF-8, not UTF-16 units: '€' is one unit and three bytes.
    const bytes = json.length > MAX_CAPABILITY_BYTES ? Infinity : Buffer.byteLength(json, 'utf8');
    if (bytes > MAX_CAPABILITY_BYTES) return this.#deliver(id, false, 'TOO_LARGE');
    // Parsed on the embedder's main thread, like a result: its objects and arrays are bounded as they are.
    const containers = countContainers(json, MAX_RESULT_CONTAINERS);
    if (containers > MAX_RESULT_CONTAINERS) return this.#deliver(id, false, 'TOO_LARGE');
    if (this.#bytesSent + bytes > MAX_CAPABILITY_BYTES_PER_CALL || this.#containersSent + containers > MAX_CAPABILITY_CONTAINERS_PER_CALL) return this.#deliver(id, false, 'TOO_MANY_REQUESTS');
    if (this.#unanswered >= MAX_CAPABILITY_IN_FLIGHT || this.#bytesInFlight + bytes > MAX_CAPABILITY_BYTES_IN_FLIGHT) return this.#deliver(id, false, 'TOO_MANY_REQUESTS');
    // A log request joins the console's lines here, where its place among them is known;
    // the host still answers it (and counts it), as it does every request.
    if (name === 'log') {
      const line = logLineOfJson(json);
      if (line !== undefined) this.log(line.level, line.message);
    }
    this.#unanswered += 1;
    this.#bytesInFlight += bytes;
    this.#bytesSent += bytes;
    this.#containersSent += containers;
    const settled = (): void => {
      this.#unanswered -= 1;
      this.#bytesInFlight -= bytes;
    };
    let answer: Promise<string>;
    try {
      answer = handler(name, json);
    } catch {
      answer = Promise.reject(new Error('failed'));
    }
    answer.then(
      (text) => {
        settled();
        if (typeof text !== 'string' || text.length > MAX_CAPABILITY_BYTES || Buffer.byteLength(text, 'utf8') > MAX_CAPABILITY_BYTES) this.#deliver(id, false, 'TOO_LARGE');
        else this.#deliver(id, true, text);
      },
      () => {
        settled();
        this.#deliver(id, false, 'FAILED');
      },
    );
  }

  #deliver(id: number, ok: boolean, payload: string): void {
    if (!this.#open || this.#options.isolate.isDisposed) return;
    // Host errors never cross: the realm builds its own generic error from this code.
    this.track(this.#options.start(['deliver', id, ok, payload]));
  }

  #maybeFinish(): void {
    if (this.#report !== undefined && this.#tasks === 0) this.#resolve(this.#report);
  }
}
