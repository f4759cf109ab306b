// Stripping a program's types off the host's main thread, under a deadline, admitted like
// the program itself. Sucrase's parser is quadratic on some inputs (a 64 KB chain of
// `a<b<b<...>(x)` takes seconds of synchronous CPU); on the main thread that would stall
// every tenant. Here it runs on a small worker pool: a strip is admitted by the program
// budget's fair share (so it counts against its tenant like any of its work), and one past
// the program's own CPU limit (at least MIN_STRIP_MS) is ended by terminating its thread: CPU_LIMIT.
// The deadline runs from the moment the worker starts the strip: a cold thread's start and
// sucrase's load are the host's cost, not the program's.
import { ToolCallError, linkAbortSignal } from '@airlock/core';
import { MessageChannel } from 'node:worker_threads';
import { Piscina } from 'piscina';
import type { Admission } from '../admission/admission.js';
import type { StripAnswer, StripTask } from './strip-types-worker.js';

const WORKER_FILE = new URL('./strip-types-worker.js', import.meta.url).href;
/**
 * The least time a strip gets, whatever the program's cpuMs: the deadline is wall clock (a
 * 64 KB honest program strips in about 0.1 s here, more when it waits for a core); a bomb
 * costs its tenant at most this, on a fairly admitted thread.
 */
export const MIN_STRIP_MS = 1000;

export class TypeStripper {
  readonly #admission: Admission;
  readonly #threads: number;
  readonly #plugin: string;
  #pool: Piscina<StripTask, StripAnswer> | undefined;

  /** `threads`: at least as many as the admission may run at once, so an admitted strip never queues. */
  constructor(admission: Admission, threads: number, plugin: string) {
    this.#admission = admission;
    this.#threads = threads;
    this.#plugin = plugin;
  }

  /** The program as JavaScript, within the program's cpuMs (at least MIN_STRIP_MS); throws ToolCallError INVALID_ARGS (does not parse) or CPU_LIMIT (past the deadline). */
  async strip(code: string, tenant: string, deadlineMs: number, signal: AbortSignal): Promise<string> {
    const grant = await this.#admission.acquire(tenant, this.#plugin, signal);
    // Created on first use; idle threads leave, so a sandbox that runs no program pays nothing.
    this.#pool ??= new Piscina<StripTask, StripAnswer>({ filename: WORKER_FILE, minThreads: 0, maxThreads: this.#threads, idleTimeout: 10_000, recordTiming: false });
    deadlineMs = Math.max(deadlineMs, MIN_STRIP_MS);
    const deadline = new AbortController();
    // What stops the strip: the deadline, or the program's signal, followed until the end
    // (AbortSignal.any would leave a dependant on a long-lived signal for good).
    const stop = linkAbortSignal(signal);
    const { port1: started, port2: startedInWorker } = new MessageChannel();
    let timer: ReturnType<typeof setTimeout> | undefined;
    let settled = false;
    started.once('message', () => {
      if (!settled) timer = setTimeout(() => (deadline.abort(), stop.abort(undefined)), deadlineMs);
    });
    let answer: StripAnswer;
    try {
      answer = await this.#pool.run({ code, started: startedInWorker }, { transferList: [startedInWorker], signal: stop.signal });
    } catch (error) {
      if (deadline.signal.aborted) throw new ToolCallError('CPU_LIMIT', `stripping the program's types took longer than ${deadlineMs} ms: write plainer TypeScript or JavaScript`);
      if (signal.aborted) throw new ToolCallError('ABORTED', 'cancelled while stripping the program\'s types');
      throw error;
    } finally {
      settled = true;
      clearTimeout(timer);
      stop.dispose();
      started.close();
      grant.release();
    }
    if (!answer.ok) throw new ToolCallError('INVALID_ARGS', `the program does not parse: ${answer.message}`);
    return answer.code;
  }
}
