// The host end of a program's `await tools.x(args)`: each one is a call of the same tenant
// through the engine's whole pipeline. Calls the program starts together (Promise.all) are
// collected into one turn, so the engine's scheduler applies as to a model's turn: concurrency-
// safe calls in parallel, every other one alone. Turns run one after another, never beside
// each other, so an exclusive call never overlaps anything. The caps hold here, on the host.
import type { JsonValue } from '../json/json-types.js';
import type { ToolCallRequest } from '../providers/provider-format.js';
import { failureContent, type ToolResult } from '../result/tool-result.js';
import { linkAbortSignal, type LinkedAbort } from '../util/merge-abort-signals.js';
import { shortened } from '../util/shortened.js';
import { escapeControls } from '../util/visible-text.js';
import type { CodeModeLimits } from './code-mode-limits.js';

/** What the program's `await tools.x(args)` receives: the value, or the failure it rejects with. */
export type SubCallAnswer = { readonly ok: true; readonly value: JsonValue } | { readonly ok: false; readonly code: string; readonly message: string };

/** One sub-call as the code tool's value reports it. */
export interface SubCallRecord {
  readonly name: string;
  readonly isError: boolean;
  readonly code?: string;
  readonly durationMs: number;
}

/** Runs a turn of calls for the program's tenant; the engine's `run`. */
export type RunTurn = (calls: readonly ToolCallRequest[], options: { readonly signal: AbortSignal; readonly tenant?: string }) => Promise<ToolResult[]>;

/** Event-loop turns a batch may wait for more calls of the same burst. */
const MAX_BATCH_WAITS = 8;
/** Log lines of the sub-calls' tools kept for the operator, per program; the rest are counted. */
const MAX_SUB_CALL_LOG_LINES = 1000;
/** Characters of a name that is not a tool shown in its refusal: a program can make one of megabytes. */
const MAX_SHOWN_NAME = 128;

interface Pending {
  readonly request: ToolCallRequest;
  readonly resolve: (answer: SubCallAnswer) => void;
  readonly startedAt: number;
  /** Answered: by its result, or at close, by the program's deadline. */
  answered: boolean;
}

export class SubCalls {
  readonly #run: RunTurn;
  readonly #tenant: string | undefined;
  readonly #limits: CodeModeLimits;
  readonly #idPrefix: string;
  readonly #offered: ReadonlySet<string>;
  readonly #scope: LinkedAbort;
  readonly #records: SubCallRecord[] = [];
  readonly #logs: { readonly level: string; readonly message: string }[] = [];
  #logsDropped = 0;
  #queue: Pending[] = [];
  /** The batch of the turn running now. */
  #running: readonly Pending[] = [];
  #made = 0;
  #inFlight = 0;
  #turn: Promise<void> | undefined;
  #flushScheduled = false;
  /** A call arrived since the batch's last check. */
  #arrived = false;
  #closed = false;
  readonly #sharesValue: (name: string) => boolean;

  /**
   * `signal` is the program's call's: cancelling it cancels every sub-call. `offered` names
   * the tools on the program's `tools`, the only ones it may call (never the code tool itself:
   * no program starts another).
   */
  constructor(options: { run: RunTurn; tenant: string | undefined; signal: AbortSignal; limits: CodeModeLimits; idPrefix: string; offered: ReadonlySet<string>; sharesValue: (name: string) => boolean }) {
    this.#run = options.run;
    this.#sharesValue = options.sharesValue;
    this.#tenant = options.tenant;
    this.#limits = options.limits;
    this.#idPrefix = options.idPrefix;
    this.#offered = options.offered;
    this.#scope = linkAbortSignal(options.signal);
  }

  /**
   * What the sub-calls' tools logged (a plugin's console and log capability), each line naming
   * its tool and call: for the operator, as a direct call's lines are, never for the model.
   */
  logs(): { readonly lines: readonly { readonly level: string; readonly message: string }[]; readonly dropped: number } {
    return { lines: [...this.#logs], dropped: this.#logsDropped };
  }

  /** The sub-calls that reached the pipeline, in the order they were answered. */
  records(): SubCallRecord[] {
    return [...this.#records];
  }

  /** One `tools.<name>(args)` from the program. Never rejects: a failure is an answer. */
  call(name: unknown, args: unknown): Promise<SubCallAnswer> {
    if (this.#closed || this.#scope.signal.aborted) return Promise.resolve(refusal('ABORTED', 'the program has ended; no more tool calls are answered'));
    if (this.#made >= this.#limits.maxCalls) return Promise.resolve(refusal('TOO_MANY_CALLS', `a program may make at most ${this.#limits.maxCalls} tool calls`));
    if (this.#inFlight >= this.#limits.maxCallsInFlight) return Promise.resolve(refusal('TOO_MANY_CALLS', `a program may have at most ${this.#limits.maxCallsInFlight} tool calls waiting at once`));
    this.#made += 1;
    const id = `${this.#idPrefix}.${this.#made}`;
    // Only a tool on the program's `tools` is called. The realm sends any name a program's code
    // can make it send (a toJSON on Object.prototype rewrote the request: an outside tester's
    // find), so the host holds the list: the code tool itself and tools denied outright are
    // not on it, and a name that is not is answered here, never reaching the pipeline or `calls`.
    if (typeof name !== 'string' || !this.#offered.has(name)) {
      const shown = typeof name !== 'string' ? 'that' : escapeControls(shortened(name, MAX_SHOWN_NAME));
      return Promise.resolve(refusal('UNKNOWN_TOOL', `${typeof name === 'string' ? `"${shown}"` : shown} is not one of this program's tools`));
    }
    const request: ToolCallRequest = { id, name, arguments: (args === undefined ? {} : args) as JsonValue };
    this.#inFlight += 1;
    return new Promise<SubCallAnswer>((resolve) => {
      this.#queue.push({ request, resolve, startedAt: performance.now(), answered: false });
      this.#schedule();
    });
  }

  /**
   * The program's call is over: cancel what still runs, and wait until every sub-call has its
   * result (an aborted call answers at once), so none runs on, unseen, after the program. A
   * trusted tool may ignore its signal and never settle: the wait ends at `deadline` (the
   * program's, on performance.now()), and what is still running is recorded as TIMEOUT.
   */
  async close(deadline: number): Promise<void> {
    this.#closed = true;
    this.#scope.abort(new Error('the program has ended'));
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'expired'>((resolve) => {
      timer = setTimeout(() => resolve('expired'), Math.max(0, deadline - performance.now()));
    });
    try {
      while (this.#turn !== undefined || this.#queue.length > 0) {
        if (this.#turn === undefined) this.#flush();
        if ((await Promise.race([this.#turn, expired])) === 'expired') {
          this.#abandonRunning();
          break;
        }
      }
    } finally {
      clearTimeout(timer);
      this.#scope.dispose();
    }
  }

  /**
   * Answers the running turn's unanswered calls as TIMEOUT (their results, if they ever come,
   * are dropped), and the calls queued behind it as never started.
   */
  #abandonRunning(): void {
    for (const pending of this.#running) {
      if (pending.answered) continue;
      pending.answered = true;
      this.#records.push({ name: pending.request.name, isError: true, code: 'TIMEOUT', durationMs: performance.now() - pending.startedAt });
      pending.resolve(refusal('TIMEOUT', `${pending.request.name}: still running at the program's deadline, though cancelled`));
    }
    const queued = this.#queue;
    this.#queue = [];
    for (const pending of queued) {
      pending.answered = true;
      this.#records.push({ name: pending.request.name, isError: true, code: 'ABORTED_BEFORE_DISPATCH', durationMs: 0 });
      pending.resolve(refusal('ABORTED_BEFORE_DISPATCH', `${pending.request.name}: the program ended before this call started`));
    }
  }

  #schedule(): void {
    this.#arrived = true;
    if (this.#flushScheduled || this.#turn !== undefined) return;
    this.#flushScheduled = true;
    this.#arrived = false;
    // Calls the program started together arrive close together, but not always in one turn of
    // the event loop (they cross a worker port and a process pipe): wait until a turn passes
    // with nothing new, a few turns at most. A lone call waits one turn.
    let waits = 0;
    const check = (): void => {
      if (this.#arrived && waits < MAX_BATCH_WAITS) {
        this.#arrived = false;
        waits += 1;
        setImmediate(check);
        return;
      }
      this.#flushScheduled = false;
      if (this.#turn === undefined) this.#flush();
    };
    setImmediate(check);
  }

  #flush(): void {
    const batch = this.#queue;
    if (batch.length === 0) return;
    this.#queue = [];
    this.#turn = this.#runTurn(batch).finally(() => {
      this.#turn = undefined;
      if (this.#queue.length > 0) this.#schedule();
    });
  }

  #keepLogs(result: ToolResult): void {
    const lines = result.metadata?.logs;
    if (Array.isArray(lines)) {
      for (const line of lines) {
        if (this.#logs.length >= MAX_SUB_CALL_LOG_LINES) {
          this.#logsDropped += 1;
          continue;
        }
        const { level, message } = (line ?? {}) as { level?: unknown; message?: unknown };
        this.#logs.push({ level: typeof level === 'string' ? level : 'info', message: `${result.name} (${result.callId}): ${String(message)}` });
      }
    }
    const dropped = result.metadata?.logsDropped;
    if (typeof dropped === 'number') this.#logsDropped += dropped;
  }

  async #runTurn(batch: readonly Pending[]): Promise<void> {
    this.#running = batch;
    let results: ToolResult[] | undefined;
    try {
      results = await this.#run(batch.map((pending) => pending.request), { signal: this.#scope.signal, ...(this.#tenant === undefined ? {} : { tenant: this.#tenant }) });
    } catch {
      results = undefined; // the engine answers every call; this is only a guard
    }
    batch.forEach((pending, index) => {
      const result = results?.[index];
      if (result !== undefined) this.#keepLogs(result);
      this.#inFlight -= 1;
      if (pending.answered) return;
      pending.answered = true;
      if (result === undefined) {
        this.#records.push({ name: pending.request.name, isError: true, code: 'TOOL_ERROR', durationMs: 0 });
        return pending.resolve(refusal('TOOL_ERROR', `${pending.request.name}: the call got no result`));
      }
      this.#records.push(result.isError ? { name: result.name, isError: true, code: result.error.code, durationMs: result.durationMs } : { name: result.name, isError: false, durationMs: result.durationMs });
      pending.resolve(answerOf(result, this.#sharesValue(result.name)));
    });
  }
}

/**
 * The program is the model's own code, and what it returns the model reads: it gets what the
 * model would have read of a direct call. A failure's message is its content (never the
 * host's message, which may name an output schema or a size limit); a tool whose content is not
 * its value (projectContent, finalizeContent) answers with that content, not the raw value.
 */
function answerOf(result: ToolResult, sharesValue: boolean): SubCallAnswer {
  if (result.isError) {
    const prefix = failureContent(result.error.code, '');
    return { ok: false, code: result.error.code, message: result.content.startsWith(prefix) ? result.content.slice(prefix.length) : result.content };
  }
  return { ok: true, value: sharesValue ? result.value : result.content };
}

function refusal(code: string, message: string): SubCallAnswer {
  return { ok: false, code, message };
}
