// Supervises the sandbox child process. A heap OOM inside isolated-vm can abort a
// whole process, so the pool never lives in the embedder's process by default:
// when the child dies its in-flight calls become SANDBOX_CRASH results and the next
// task starts a fresh child.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { NO_USAGE, type SandboxOutcome, type SandboxTask } from '../isolate/protocol.js';
import { THREADS_ENV, type FromChild, type ToChild } from './child-protocol.js';
import type { PoolOptions, SandboxHost } from './sandbox-host.js';

const CHILD_FILE = new URL('./child-main.js', import.meta.url);

export interface ChildProcessOptions extends PoolOptions {
  /** OS-level ceiling on the child's resident memory, in MiB; past it the child is killed. Default 2048. */
  readonly processMemoryMb?: number;
}

interface Pending {
  readonly resolve: (outcome: SandboxOutcome) => void;
}

export class ChildProcessHost implements SandboxHost {
  readonly #options: ChildProcessOptions;
  readonly #pending = new Map<number, Pending>();
  #child: ChildProcess | undefined;
  #rssTimer: ReturnType<typeof setInterval> | undefined;
  #nextId = 1;
  #closed = false;
  #deathReason: string | undefined;

  constructor(options: ChildProcessOptions = {}) {
    this.#options = options;
  }

  run(task: SandboxTask, signal?: AbortSignal): Promise<SandboxOutcome> {
    if (this.#closed) return Promise.resolve(crash('the sandbox is closed'));
    if (signal?.aborted) return Promise.resolve({ ok: false, code: 'ABORTED', message: 'cancelled before it started', usage: NO_USAGE });
    const child = this.#ensureChild();
    const id = this.#nextId;
    this.#nextId += 1;
    return new Promise<SandboxOutcome>((resolve) => {
      const onAbort = (): void => {
        this.#send(child, { type: 'cancel', id });
      };
      this.#pending.set(id, {
        resolve: (outcome) => {
          signal?.removeEventListener('abort', onAbort);
          this.#pending.delete(id);
          this.#refreshRef();
          resolve(outcome);
        },
      });
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#refreshRef();
      if (!this.#send(child, { type: 'run', id, task })) this.#pending.get(id)?.resolve(crash('the sandbox process is not reachable'));
    });
  }

  processIds(): number[] {
    return this.#child?.pid === undefined ? [] : [this.#child.pid];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const child = this.#child;
    this.#failAll('the sandbox was closed');
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      // The child holds nothing worth flushing, and a hard stop never runs isolated-vm's
      // teardown (which can abort after a kill): results were all collected above.
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.ref(); // an idle child is unref'd; waiting for its exit must keep this process alive
      child.kill('SIGKILL');
      await exited;
    }
  }

  #ensureChild(): ChildProcess {
    if (this.#child !== undefined) return this.#child;
    const heapMb = Math.max(256, Math.floor((this.#options.processMemoryMb ?? 2048) / 2));
    const child = fork(CHILD_FILE, [], {
      // The flag isolated-vm needs, and a V8 heap ceiling for the child's own JS.
      execArgv: ['--no-node-snapshot', `--max-old-space-size=${heapMb}`],
      // stdout stays closed: an MCP server's stdout is the protocol.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: { ...process.env, ...(this.#options.threads === undefined ? {} : { [THREADS_ENV]: String(this.#options.threads) }) },
      serialization: 'advanced',
    });
    this.#child = child;
    this.#deathReason = undefined;
    child.on('message', (message: FromChild) => {
      if (message.type === 'result') this.#pending.get(message.id)?.resolve(message.outcome);
    });
    child.on('error', () => undefined); // 'exit' follows and settles everything
    child.once('exit', (code, signal) => {
      if (this.#child === child) this.#child = undefined;
      clearInterval(this.#rssTimer);
      const why = this.#deathReason ?? (signal !== null ? `was killed by ${signal}` : `exited with code ${code}`);
      this.#failAll(`the sandbox process ${why} during the call`);
    });
    this.#watchMemory(child);
    return child;
  }

  /** Polls the child's resident memory: the OS-level ceiling no plugin can negotiate. */
  #watchMemory(child: ChildProcess): void {
    const ceilingMb = this.#options.processMemoryMb ?? 2048;
    clearInterval(this.#rssTimer);
    this.#rssTimer = setInterval(() => {
      const rssMb = residentMb(child.pid);
      if (rssMb !== undefined && rssMb > ceilingMb) {
        this.#deathReason = `exceeded its memory ceiling (${rssMb} MiB > ${ceilingMb} MiB)`;
        child.kill('SIGKILL');
      }
    }, 200);
    this.#rssTimer.unref();
  }

  #send(child: ChildProcess, message: ToChild): boolean {
    if (!child.connected) return false;
    try {
      child.send(message);
      return true;
    } catch {
      return false;
    }
  }

  #failAll(message: string): void {
    for (const pending of [...this.#pending.values()]) pending.resolve(crash(message));
  }

  /** An idle sandbox must not keep the embedding process alive. */
  #refreshRef(): void {
    const child = this.#child;
    if (child === undefined) return;
    const channel = child.channel as { ref?: () => void; unref?: () => void } | undefined;
    if (this.#pending.size > 0) {
      child.ref();
      channel?.ref?.();
    } else {
      child.unref();
      channel?.unref?.();
    }
  }
}

function crash(message: string): SandboxOutcome {
  return { ok: false, code: 'SANDBOX_CRASH', message, usage: NO_USAGE };
}

function residentMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const match = /VmRSS:\s+(\d+)\s+kB/.exec(status);
    return match === null ? undefined : Math.round(Number(match[1]) / 1024);
  } catch {
    return undefined; // not Linux, or the process is gone
  }
}
