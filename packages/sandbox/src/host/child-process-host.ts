// Supervises the sandbox child process. A heap OOM inside isolated-vm can abort a
// whole process, so the pool never lives in the embedder's process by default:
// when a child dies its in-flight calls become SANDBOX_CRASH results and the next
// task starts a fresh child.
import { fork, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { NO_USAGE, NOT_DISPATCHED, type CapabilityHandler, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import { BLAME_FILE_ENV, CEILING_ENV, THREADS_ENV, type FromChild, type ToChild, type WireTask } from './child-protocol.js';
import { onAbort } from '@airlock/core';
import { PendingRequests } from '../rpc/pending-requests.js';
import { MessageOutbox, unbatch, type Batch } from './message-outbox.js';
import type { InFlightPair } from './crash-quarantine.js';
import { blameForDeath } from './death-blame.js';
import { KilledTasks } from './killed-tasks.js';
import { MemoryOffenders } from './memory-offenders.js';
import type { PoolOptions, SandboxHost } from './sandbox-host.js';

/** The child's resident-memory ceiling when the options name none, in MiB. */
const DEFAULT_CEILING_MB = 2048;
/**
 * Past this share of its ceiling a child takes no new calls: it answers those in flight and
 * exits, and the next call starts a fresh child. Its pool workers evict idle isolates from
 * 75% (worker/memory-guard.ts), so what is left up here is memory no isolate holds: V8 and
 * ICU keep process-wide caches that are never freed (a date pattern generator per distinct
 * locale, about 50 KiB each, of which a plugin can make thousands). A kill at the ceiling
 * would fail every call in flight, a neighbour's too.
 */
const RETIRE_SHARE = 0.9;
/** How long past the last deadline of its calls a process retired for a zombie may live. */
const ZOMBIE_EXIT_GRACE_MS = 5000;
/** Blocks this large or larger are mapped on their own and unmapped when freed (glibc's default, kept fixed). */
const MMAP_THRESHOLD_BYTES = 128 * 1024;

const CHILD_FILE = new URL('./child-main.js', import.meta.url);

export interface ChildProcessOptions extends PoolOptions {
  /** OS-level ceiling on the child's resident memory, in MiB; past it the child is killed. Default 2048. */
  readonly processMemoryMb?: number;
  /**
   * Told who was in flight when a crash happened: every pair with a task in a child that
   * died unasked, or the one pair whose call's worker died (which retires its child).
   */
  readonly onCrash?: (inFlight: readonly InFlightPair[]) => void;
  /**
   * A child with no task in flight for this long exits; the next task starts a new one. For
   * probation lanes, which serve a suspect for a while and then nobody: without it, every lane
   * ever used would keep its process (and its isolates) for the sandbox's lifetime.
   */
  readonly idleExitMs?: number;
}

/** What the parent keeps for a task in flight in a child. */
interface InFlight {
  /** Whose work it is, for blame when the child dies. */
  readonly owner: InFlightPair;
  /** Who answers its capability calls. */
  readonly capabilities: CapabilityHandler | undefined;
  /** When its deadline has passed, by the host's clock (performance.now()). */
  readonly deadlineAt: number;
}

/** One child process and the calls it owes answers to. */
interface Child {
  readonly process: ChildProcess;
  readonly tasks: PendingRequests<SandboxOutcome, InFlight>;
  readonly rssTimer: ReturnType<typeof setInterval>;
  deathReason: string | undefined;
  /** Takes no new calls; killed once its in-flight calls are answered. */
  retired: boolean;
  /**
   * A worker died under a call here, and the crash was pinned on that call. If the process
   * then dies too (a V8 fatal error aborts it a moment later), that is the same fault: the
   * calls it takes down are its victims, never suspects (a lone one would even be struck).
   */
  pinned: boolean;
  /** The child said it is listening: tasks sent before then wait unread. */
  ready: boolean;
  /** Plugins whose source this child already holds. */
  readonly plugins: Set<string>;
  /** Killed by the resident-memory watcher. */
  atMemoryCeiling: boolean;
  readonly memoryOffenders: MemoryOffenders;
  /** Pairs struck here as zombies (tenant+plugin JSON): each is struck once. */
  readonly zombies: Set<string>;
  /** What this turn sends the child, in one message. */
  readonly outbox: MessageOutbox<ToChild>;
  /** Armed while no task is in flight, when the options ask idle children to exit. */
  idleTimer: ReturnType<typeof setTimeout> | undefined;
  /** Kills here whose isolates may still be running (answered `stillRunning`, not yet settled). */
  readonly killed: KilledTasks;
}



export class ChildProcessHost implements SandboxHost {
  readonly #options: ChildProcessOptions;
  readonly #children = new Set<Child>();
  #current: Child | undefined;
  #closed = false;

  constructor(options: ChildProcessOptions = {}) {
    this.#options = options;
  }

  run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    // Nothing ran and nothing died: a retry would not help, so no SANDBOX_CRASH.
    if (this.#closed) return Promise.resolve({ ok: false, code: 'ABORTED_BEFORE_DISPATCH', message: 'the sandbox is closed: the call was not run', usage: NO_USAGE });
    if (signal?.aborted) return Promise.resolve(NOT_DISPATCHED);
    const child = this.#currentChild();
    clearTimeout(child.idleTimer);
    const timeoutMs = task.kind === 'ping' ? 0 : task.plugin.limits.timeoutMs;
    const inFlight: InFlight = { owner: task.kind === 'call' || task.kind === 'classify' ? { tenant: task.tenant, plugin: task.plugin.name } : undefined, capabilities, deadlineAt: performance.now() + timeoutMs };
    const outcome = child.tasks.request(
      inFlight,
      (id) => send(child, { type: 'run', id, task: this.#withoutSpec(child, task) }),
      signal === undefined ? undefined : { signal, onAbort: (id) => this.#cancel(child, id) },
    );
    refreshRef(child);
    return outcome;
  }

  /**
   * Tells the child, which stops the task and answers for it. A child that has not said it is
   * ready has not read the task yet: the answer is given here, at once (its own comes later
   * and finds the task settled), and a capability request it might still send finds no call.
   */
  #cancel(child: Child, id: number): void {
    send(child, { type: 'cancel', id });
    if (!child.ready) child.tasks.resolve(id, NOT_DISPATCHED);
  }

  processIds(): number[] {
    const pid = this.#current?.process.pid;
    return pid === undefined ? [] : [pid];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    const exits: Promise<void>[] = [];
    for (const child of this.#children) {
      child.tasks.failAll('the sandbox was closed');
      const { process: proc } = child;
      if (proc.exitCode !== null || proc.signalCode !== null) continue;
      exits.push(new Promise<void>((resolve) => proc.once('exit', () => resolve())));
      // The child holds nothing worth flushing, and a hard stop never runs isolated-vm's
      // teardown (which can abort after a kill). An idle child is unref'd, so re-ref it:
      // waiting for its exit must keep this process alive.
      proc.ref();
      proc.kill('SIGKILL');
    }
    await Promise.all(exits);
  }

  #currentChild(): Child {
    if (this.#current !== undefined && !this.#current.retired) return this.#current;
    const heapMb = Math.max(256, Math.floor((this.#options.processMemoryMb ?? DEFAULT_CEILING_MB) / 2));
    // Where the child names the tenant whose isolate V8 lost control of, just before it aborts.
    const blameFile = join(tmpdir(), `airlock-blame-${process.pid}-${randomUUID()}`);
    const proc = fork(CHILD_FILE, [], {
      // The flag isolated-vm needs, and a V8 heap ceiling for the child's own JS.
      execArgv: ['--no-node-snapshot', `--max-old-space-size=${heapMb}`],
      // stdout stays closed: an MCP server's stdout is the protocol.
      stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
      env: {
        ...process.env,
        // glibc otherwise raises its mmap threshold as large blocks are freed, and keeps what
        // an evicted or killed isolate's array buffers freed: the resident size this process
        // is killed at would count memory no isolate holds any more (worker/memory-guard.ts).
        MALLOC_MMAP_THRESHOLD_: process.env.MALLOC_MMAP_THRESHOLD_ ?? String(MMAP_THRESHOLD_BYTES),
        [BLAME_FILE_ENV]: blameFile,
        [CEILING_ENV]: String(this.#options.processMemoryMb ?? DEFAULT_CEILING_MB),
        ...(this.#options.threads === undefined ? {} : { [THREADS_ENV]: String(this.#options.threads) }) },
      serialization: 'advanced',
    });
    const child: Child = {
      process: proc,
      tasks: new PendingRequests<SandboxOutcome, InFlight>({
        failed: crash,
        watchAbort: onAbort,
        onSettled: () => {
          refreshRef(child);
          if (child.tasks.size > 0) return;
          if (child.retired) child.process.kill('SIGKILL');
          else this.#exitWhenIdle(child);
        },
      }),
      rssTimer: this.#watchMemory(proc),
      deathReason: undefined,
      retired: false,
      pinned: false,
      ready: false,
      plugins: new Set(),
      outbox: new MessageOutbox<ToChild>((message) => write(proc, message), () => proc.connected),
      idleTimer: undefined,
      killed: new KilledTasks(),
      atMemoryCeiling: false,
      memoryOffenders: new MemoryOffenders(),
      zombies: new Set(),
    };
    this.#children.add(child);
    this.#current = child;
    proc.on('message', (wire: FromChild | Batch<FromChild>) => {
      for (const message of unbatch(wire)) this.#receive(child, message);
    });
    proc.on('error', () => undefined); // 'exit' follows and settles everything
    proc.once('exit', (code, signal) => {
      clearInterval(child.rssTimer);
      clearTimeout(child.idleTimer);
      this.#children.delete(child);
      if (this.#current === child) this.#current = undefined;
      const why = child.deathReason ?? (signal !== null ? `was killed by ${signal}` : `exited with code ${code}`);
      const culprit = readBlame(blameFile);
      // Named here and struck below: its zombie report, if it is still on its way, strikes nobody again.
      if (culprit !== undefined) child.zombies.add(JSON.stringify([culprit.tenant, culprit.plugin]));
      if (!this.#closed && !child.pinned) {
        // Named by the child, the culprit is certain and the calls in flight are its victims;
        // unnamed, the calls in flight are blamed only when nothing else explains the death
        // (death-blame.ts), and the quarantine decides what that is worth.
        const blamed = blameForDeath({
          named: culprit,
          stillRunning: child.killed.stillRunning(),
          atMemoryCeiling: child.atMemoryCeiling,
          memoryOffenders: child.memoryOffenders.recent(),
          inFlight: child.tasks.contexts().map((inFlight) => inFlight.owner),
        });
        if (blamed !== undefined) this.#options.onCrash?.(blamed);
      }
      child.tasks.failAll(`the sandbox process ${why} during the call`);
    });
    return child;
  }

  #receive(child: Child, message: FromChild): void {
    if (message.type === 'capability') {
      // A cancelled call's requests are neither asked nor answered (plugin/capability-handler.ts).
      const handler = child.tasks.context(message.id)?.capabilities;
      const answer = handler === undefined ? Promise.reject(new Error('no capabilities')) : handler(message.name, message.json);
      answer.then(
        (json) => send(child, { type: 'capability-reply', id: message.id, requestId: message.requestId, ok: true, json }),
        () => send(child, { type: 'capability-reply', id: message.id, requestId: message.requestId, ok: false }),
      );
      return;
    }
    if (message.type === 'ready') {
      child.ready = true;
      return;
    }
    if (message.type === 'retire') return this.#retire(child);
    if (message.type === 'killed-settled') return child.killed.settled({ tenant: message.tenant, plugin: message.plugin });
    if (message.type === 'zombie') {
      // Certain blame: its call was answered, its isolate killed, and it still runs. If the
      // process aborts when it ends, the calls in flight then are its victims, not suspects.
      // One strike per pair: a zombie is told of again when isolated-vm gives up on it.
      const key = JSON.stringify([message.tenant, message.plugin]);
      if (!child.zombies.has(key)) this.#options.onCrash?.([{ tenant: message.tenant, plugin: message.plugin }]);
      child.zombies.add(key);
      child.pinned = true;
      this.#retire(child);
      // A thread isolated-vm stopped for good may hold a lock the others need: the calls in
      // flight get until their deadlines (and a little) to answer, then the process goes.
      const lastDeadline = Math.max(0, ...child.tasks.contexts().map((inFlight) => inFlight.deadlineAt));
      setTimeout(() => child.process.kill('SIGKILL'), Math.max(0, lastDeadline - performance.now()) + ZOMBIE_EXIT_GRACE_MS).unref();
      return;
    }
    if (message.type !== 'result') return;
    const owner = child.tasks.context(message.id)?.owner;
    if (message.outcome.stillRunning === true && owner !== undefined) child.killed.answered(owner);
    if (!message.outcome.ok && message.outcome.code === 'MEMORY_LIMIT' && owner !== undefined) child.memoryOffenders.answered(owner);
    // A worker died under this call: its process may be about to abort (a V8 fatal
    // error), so it takes no new calls. Later calls go to a fresh child.
    if (!message.outcome.ok && message.outcome.code === 'SANDBOX_CRASH') {
      this.#retire(child);
      const inFlight = child.tasks.context(message.id);
      if (inFlight !== undefined) {
        child.pinned = true;
        this.#options.onCrash?.([inFlight.owner]);
      }
    }
    child.tasks.resolve(message.id, message.outcome);
  }

  /** The plugin's spec (its source too) crosses to each child once; tasks then carry only its key. */
  #withoutSpec(child: Child, task: SandboxTask): WireTask {
    if (task.kind === 'ping') return task;
    if (!child.plugins.has(task.plugin.key) && send(child, { type: 'plugin', spec: task.plugin })) child.plugins.add(task.plugin.key);
    return { ...task, plugin: task.plugin.key };
  }

  /** Retires the child if it is still idle after `idleExitMs` (a task sent meanwhile disarms it). */
  #exitWhenIdle(child: Child): void {
    const idleMs = this.#options.idleExitMs;
    if (idleMs === undefined) return;
    clearTimeout(child.idleTimer);
    child.idleTimer = setTimeout(() => {
      if (child.tasks.size === 0 && !child.retired) this.#retire(child);
    }, idleMs);
    child.idleTimer.unref();
  }

  #retire(child: Child): void {
    child.retired = true;
    if (this.#current === child) this.#current = undefined;
    if (child.tasks.size === 0) child.process.kill('SIGKILL');
  }

  /** Polls the child's resident memory: the OS-level ceiling no plugin can negotiate, and the mark that retires it first. */
  #watchMemory(proc: ChildProcess): ReturnType<typeof setInterval> {
    const ceilingMb = this.#options.processMemoryMb ?? DEFAULT_CEILING_MB;
    const timer = setInterval(() => {
      const rssMb = residentMb(proc.pid);
      if (rssMb === undefined || rssMb < RETIRE_SHARE * ceilingMb) return;
      const child = [...this.#children].find((candidate) => candidate.process === proc);
      if (rssMb <= ceilingMb) {
        if (child !== undefined && !child.retired) this.#retire(child);
        return;
      }
      if (child !== undefined) {
        child.deathReason = `exceeded its memory ceiling (${rssMb} MiB > ${ceilingMb} MiB)`;
        child.atMemoryCeiling = true;
      }
      proc.kill('SIGKILL');
    }, 200);
    timer.unref();
    return timer;
  }
}

function send(child: Child, message: ToChild): boolean {
  return child.outbox.send(message);
}

function write(proc: ChildProcess, message: ToChild | Batch<ToChild>): boolean {
  if (!proc.connected) return false;
  try {
    proc.send(message);
    return true;
  } catch {
    return false;
  }
}

/** An idle sandbox must not keep the embedding process alive. */
function refreshRef(child: Child): void {
  const channel = child.process.channel as { ref?: () => void; unref?: () => void } | undefined;
  if (child.tasks.size > 0) {
    child.process.ref();
    channel?.ref?.();
  } else {
    child.process.unref();
    channel?.unref?.();
  }
}

function crash(message: string): SandboxOutcome {
  return { ok: false, code: 'SANDBOX_CRASH', message, usage: NO_USAGE };
}

/** The pair a dead child named in its blame file (and the file removed), if it wrote one. */
function readBlame(file: string): { readonly tenant: string; readonly plugin: string } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return undefined; // it wrote none: the usual case
  }
  rmSync(file, { force: true });
  try {
    const owner = JSON.parse(text) as { tenant?: unknown; plugin?: unknown };
    return typeof owner.tenant === 'string' && typeof owner.plugin === 'string' ? { tenant: owner.tenant, plugin: owner.plugin } : undefined;
  } catch {
    return undefined;
  }
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


