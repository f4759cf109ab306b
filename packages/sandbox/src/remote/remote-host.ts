// The host side of remote executors: a SandboxHost whose tasks run on executor processes
// reached over NATS. Each call is offered to the fleet (NATS hands the offer to one executor
// of the queue group), run only after this host's explicit "go" to the one executor that
// accepted it, and answered exactly once: by its result, by SANDBOX_CRASH when that executor
// dies (a liveness probe finds its subscription gone), by a backstop past its deadline, or
// by ABORTED_BEFORE_DISPATCH when no executor took it (it never ran anywhere).
import { ErrorCode, type Msg, type NatsConnection, type Subscription } from 'nats';
import { onAbort } from '@airlock/core';
import { NO_USAGE, type CapabilityHandler, type PluginSpec, type SandboxOutcome, type SandboxTask } from '../worker/worker-protocol.js';
import type { SandboxHost } from '../host/sandbox-host.js';
import { BACKSTOP_GRACE_MS, taskTimeoutMs } from '../host/task-backstop.js';
import { PROBE_TIMEOUT_MS, decode, encode, isToken, pluginFingerprint, randomToken, readOutcome, subjects, type CapabilityAnswer, type Offer, type RemoteTask, type ToExecutor } from './wire.js';
import { shownEngineUrl } from './connect-engine.js';
import { leaveBus } from './leave-bus.js';

export interface RemoteHostOptions {
  readonly connection: NatsConnection;
  /** The server URL, for messages. */
  readonly url: string;
  readonly prefix: string;
  /** The operator's name for this host on the bus (see subjects.hostCalls). */
  readonly group: string;
  /** This process's own id under the group, random (the connection's inbox is built from it). */
  readonly id: string;
  /** How long a call may keep being refused by busy executors before it ends, never run. */
  readonly dispatchTimeoutMs: number;
  /** How often an executor running this host's calls is probed. */
  readonly livenessMs: number;
}

/** One offer's wait for an answer; a late accept lets the executor's reservation lapse. */
const OFFER_TIMEOUT_MS = 1000;
/**
 * On top of the task's own deadline and the worker backstop, before this host gives up on a
 * live executor that never answered. An executor that dies is found by the liveness probe
 * long before; this only bounds an executor that stays up yet loses a call, so it is
 * generous: an executor starting a sandbox process under load must not be cut short.
 */
const REMOTE_GRACE_MS = 10_000;
/** Probes of one executor in flight at once: a hung executor holds them all until the first times out. */
const MAX_PROBES_OUT = 4;
/** A flush answered within this long: nothing was queued for this host, so a probe's missing answer was never sent. */
const CLEAR_LINE_MS = 250;
/** Waiting calls also re-offer on their own, backing off from 5 ms to this, in case a "free" notice is lost. */
const MAX_BUSY_WAIT_MS = 200;
/** The line of calls that found an executor full. */
const FLEET = 'fleet';
/** Tenants whose last start this host remembers before it forgets those with no call here. */
const MAX_REMEMBERED_TENANTS = 1024;

interface RemoteCall {
  readonly token: string;
  readonly task: SandboxTask & { readonly plugin: PluginSpec };
  readonly capabilities: CapabilityHandler | undefined;
  readonly signal: AbortSignal | undefined;
  /** The executor told to run it ("go" sent), if any. */
  executor: string | undefined;
  /** The offer attempt that executor accepted: only messages from it count. */
  attempt: string | undefined;
  settled: boolean;
  backstop: ReturnType<typeof setTimeout> | undefined;
  /** When its deadline passes (performance.now()), once an executor runs it. */
  deadlineAt: number;
  /** Set while the call waits in line for a free executor. */
  wake: ((executor: string | undefined) => void) | undefined;
  /** The line it waits in, if any. */
  line: string | undefined;
  settle(outcome: SandboxOutcome): void;
}

interface ExecutorWatch {
  readonly tokens: Set<string>;
  readonly timer: ReturnType<typeof setInterval>;
  /** Probes sent and not yet answered. */
  probes: number;
  /** When a probe was last answered (performance.now()). */
  answeredAt: number;
  /** Set while a flush decides whether a probe's silence was the executor's. */
  flushing: boolean;
}

const fail = (code: Extract<SandboxOutcome, { ok: false }>['code'], message: string): SandboxOutcome => ({ ok: false, code, message, usage: NO_USAGE });
const errorCode = (error: unknown): string | undefined => (error as { code?: string } | undefined)?.code;

export class RemoteHost implements SandboxHost {
  readonly #options: RemoteHostOptions;
  readonly #calls = new Map<string, RemoteCall>();
  readonly #watches = new Map<string, ExecutorWatch>();
  /** When a live call's message last came from each executor: signs of life the liveness probe counts. */
  readonly #heard = new Map<string, number>();
  readonly #fingerprints = new WeakMap<PluginSpec, string>();
  readonly #subscriptions: Subscription[];
  /**
   * Calls waiting for a slot, in order; only each line's head offers. FLEET holds calls that
   * found an executor full; `tenant:<id>` those whose tenant held its share where they asked.
   */
  readonly #lines = new Map<string, RemoteCall[]>();
  /** When each tenant's call last started (performance.now()): ties in the fleet line go to the tenant served longest ago. */
  readonly #lastStarted = new Map<string, number>();
  #closed = false;

  constructor(options: RemoteHostOptions) {
    this.#options = options;
    this.#subscriptions = [
      options.connection.subscribe(subjects.hostCalls(options.prefix, options.group, options.id), { callback: (error, message) => error === null && this.#onMessage(message) }),
      options.connection.subscribe(subjects.free(options.prefix), { callback: (error, message) => {
        const executor = error === null ? decode(message.data)?.executor : undefined;
        // A freed slot wakes each line's head, not a herd of offers: the head whose tenant runs
        // least here first, so its offer reaches the freed executor first.
        if (isToken(executor)) for (const key of this.#linesByNeed()) this.#wakeHead(key, executor);
      } }),
    ];
  }

  run(task: SandboxTask, signal?: AbortSignal, capabilities?: CapabilityHandler): Promise<SandboxOutcome> {
    if (this.#closed) return Promise.resolve(fail('ABORTED_BEFORE_DISPATCH', 'the sandbox is closed: the call was not run'));
    if (task.kind === 'ping') return Promise.resolve({ ok: true, json: 'null', usage: NO_USAGE });
    if (signal?.aborted) return Promise.resolve(fail('ABORTED_BEFORE_DISPATCH', 'cancelled before it started'));
    return new Promise<SandboxOutcome>((resolve) => {
      const call: RemoteCall = {
        token: randomToken(),
        task,
        capabilities,
        signal,
        executor: undefined,
        attempt: undefined,
        settled: false,
        backstop: undefined,
        deadlineAt: Infinity,
        wake: undefined,
        line: undefined,
        settle: (outcome) => {
          if (call.settled) return;
          call.settled = true;
          call.wake?.(undefined); // out of the line at once, if it waits there
          this.#calls.delete(call.token);
          clearTimeout(call.backstop);
          unwatch?.();
          if (call.executor !== undefined) this.#unwatch(call.executor, call.token);
          resolve(outcome);
        },
      };
      this.#calls.set(call.token, call);
      // Registered after `call` exists; `signal` is not aborted yet, so settle cannot run before this is set.
      const unwatch = signal === undefined ? undefined : onAbort(signal, () => {
        // Not yet told to run anywhere: it ends here, never run. Running: the executor aborts it and answers.
        if (call.executor === undefined) return call.settle(fail('ABORTED_BEFORE_DISPATCH', 'cancelled before it started'));
        this.#send(call.executor, { type: 'cancel', token: call.token, attempt: call.attempt as string });
      });
      void this.#dispatch(call);
    });
  }

  processIds(): number[] {
    return [];
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    for (const call of [...this.#calls.values()]) {
      if (call.executor !== undefined) this.#send(call.executor, { type: 'cancel', token: call.token, attempt: call.attempt as string });
      call.settle(fail('SANDBOX_CRASH', 'the sandbox was closed'));
    }
    for (const subscription of this.#subscriptions) subscription.unsubscribe();
    for (const watch of this.#watches.values()) clearInterval(watch.timer);
    this.#watches.clear();
    await leaveBus(this.#options.connection);
  }

  /**
   * Offers the call until one executor accepts it, then tells exactly that one to run it. When
   * executors refuse, calls wait in this host's lines and only each line's head offers
   * (backing off, and woken at once when a slot frees), so a full fleet costs one offer per
   * freed slot, not one per waiting call. A call refused because its tenant holds its share
   * waits in that tenant's own line, so one tenant's cap never holds up another tenant.
   */
  async #dispatch(call: RemoteCall): Promise<void> {
    const { connection, prefix, dispatchTimeoutMs } = this.#options;
    const fingerprint = this.#fingerprintOf(call.task.plugin);
    const replyTo = subjects.call(prefix, this.#options.group, this.#options.id, call.token);
    const task = remoteTask(call.task);
    const deadline = performance.now() + dispatchTimeoutMs;
    let busyWaitMs = 5;
    const tenantLine = `tenant:${tenantOf(call.task)}`;
    // Calls already waiting go first: a new call does not overtake a line.
    let line = this.#waiters(FLEET) > 0 ? FLEET : this.#waiters(tenantLine) > 0 ? tenantLine : undefined;
    // An executor that just freed a slot: the next offer goes to it alone.
    let freed: string | undefined;
    // The last offer timed out (rather than being refused): said in the message if the deadline passes.
    let unanswered = false;
    try {
      while (!call.settled) {
        if (line !== undefined) {
          freed = await this.#waitInLine(call, line, busyWaitMs, deadline);
          if (this.#headOf(line) === call) busyWaitMs = Math.min(busyWaitMs * 2, MAX_BUSY_WAIT_MS);
          if (call.settled) return;
        }
        const left = Math.floor(deadline - performance.now());
        if (left < 1) {
          const why = unanswered ? 'its last offer went unanswered: the NATS server may be unreachable, or its executors too loaded to reply' : `every executor serving the ${call.task.plugin.name} plugin was busy`;
          return call.settle(fail('ABORTED_BEFORE_DISPATCH', `no executor took the call within ${dispatchTimeoutMs} ms (${why}); it was not run`));
        }
        const subject = freed === undefined ? subjects.offer(prefix, fingerprint) : subjects.direct(prefix, freed, fingerprint);
        const direct = freed !== undefined;
        freed = undefined;
        let reply: Msg;
        const timeout = Math.min(OFFER_TIMEOUT_MS, left);
        const attempt = randomToken();
        const offer: Offer = { type: 'offer', token: call.token, attempt, deadline: Date.now() + timeout, replyTo, task };
        const data = encode(offer);
        // The arguments travel as a JSON string inside the offer: every quote and backslash in
        // them is escaped once more, so arguments the pipeline accepted can outgrow the server's
        // limit here. Said in those words, not as the client's error code.
        const maxPayload = connection.info?.max_payload;
        if (maxPayload !== undefined && data.length > maxPayload) {
          return call.settle(fail('ABORTED_BEFORE_DISPATCH', `the call's arguments, escaped inside its offer (${data.length} bytes), are larger than the NATS server on ${shownEngineUrl(this.#options.url)} carries (max_payload ${maxPayload} bytes): raise the server's max_payload or send smaller arguments; it was not run`));
        }
        try {
          reply = await connection.request(subject, data, { timeout });
        } catch (error) {
          if (call.settled) return;
          const code = errorCode(error);
          if (code === ErrorCode.NoResponders && direct) continue; // that executor left (or does not hold this plugin): ask the fleet
          if (code === ErrorCode.NoResponders) return call.settle(fail('ABORTED_BEFORE_DISPATCH', this.#noExecutorMessage(call.task.plugin.name)));
          if (code === ErrorCode.Timeout) {
            unanswered = true;
            continue; // whoever accepts too late lets its reservation lapse: it never runs
          }
          return call.settle(fail('ABORTED_BEFORE_DISPATCH', `could not offer the call to the executors on ${shownEngineUrl(this.#options.url)} (${code ?? (error as Error).message}); it was not run`));
        }
        if (call.settled) return; // cancelled meanwhile: no "go", so an accepting executor's reservation lapses
        unanswered = false;
        const answer = decode(reply.data);
        if (answer?.accepted === true && isToken(answer.executor)) return this.#start(call, answer.executor, attempt);
        // Full, or this tenant holds its share there: wait in the matching line for a freed slot.
        line = answer?.reason === 'tenant-busy' ? tenantLine : FLEET;
      }
    } finally {
      this.#leaveLine(call);
    }
  }

  #waiters(line: string): number {
    return this.#lines.get(line)?.length ?? 0;
  }

  /**
   * Waits for this call's turn in `line`: the head waits `backoffMs` or until woken (a slot
   * freed: resolves with that executor); the others until they become the head and are woken.
   * Either way, no longer than the dispatch deadline.
   */
  #waitInLine(call: RemoteCall, line: string, backoffMs: number, deadline: number): Promise<string | undefined> {
    if (call.line !== line) {
      this.#leaveLine(call);
      const queue = this.#lines.get(line) ?? [];
      queue.push(call);
      this.#lines.set(line, queue);
      call.line = line;
    }
    return new Promise((resolve) => {
      const left = Math.max(0, deadline - performance.now());
      const timer = setTimeout(() => call.wake?.(undefined), this.#headOf(line) === call ? Math.min(backoffMs, left) : left);
      call.wake = (executor) => {
        clearTimeout(timer);
        call.wake = undefined;
        resolve(executor);
      };
    });
  }

  /** Takes the call out of its line; when it was the head, the next call offers at once. */
  #leaveLine(call: RemoteCall): void {
    const line = call.line;
    if (line === undefined) return;
    call.line = undefined;
    const wasHead = this.#headOf(line) === call;
    const queue = this.#lines.get(line) ?? [];
    const index = queue.indexOf(call);
    if (index !== -1) queue.splice(index, 1);
    if (queue.length === 0) this.#lines.delete(line);
    else if (wasHead) this.#wakeHead(line, undefined);
  }

  /** A slot freed (on `executor`, when known): the head of `line` offers now. */
  #wakeHead(line: string, executor: string | undefined): void {
    this.#headOf(line)?.wake?.(executor);
  }

  /**
   * The call of `line` that offers next. A tenant's own line is first come, first served. The
   * fleet line holds every tenant's calls, so first come would let two busy tenants' queued
   * calls hold a third tenant's call for as long as they keep calling (an outside tester's
   * find: 10 s, then ABORTED_BEFORE_DISPATCH): its head is the oldest call of the tenant
   * that runs fewest calls from this host, ties to the tenant whose call started longest ago.
   */
  #headOf(line: string): RemoteCall | undefined {
    const queue = this.#lines.get(line);
    if (queue === undefined || queue.length < 2 || line !== FLEET) return queue?.[0];
    const running = this.#runningByTenant();
    let head: RemoteCall | undefined;
    let headNeed: readonly [number, number] = [Infinity, Infinity];
    for (const call of queue) {
      const need = this.#needOf(tenantOf(call.task), running);
      if (need[0] < headNeed[0] || (need[0] === headNeed[0] && need[1] < headNeed[1])) [head, headNeed] = [call, need];
    }
    return head;
  }

  /** The lines, the one whose head's tenant runs fewest calls here first. */
  #linesByNeed(): string[] {
    const running = this.#runningByTenant();
    const keyed = [...this.#lines.keys()].map((line) => {
      const head = this.#headOf(line);
      return { line, need: head === undefined ? ([Infinity, Infinity] as const) : this.#needOf(tenantOf(head.task), running) };
    });
    return keyed.sort((a, b) => a.need[0] - b.need[0] || a.need[1] - b.need[1]).map(({ line }) => line);
  }

  #needOf(tenant: string, running: ReadonlyMap<string, number>): readonly [number, number] {
    return [running.get(tenant) ?? 0, this.#lastStarted.get(tenant) ?? -Infinity];
  }

  /** Calls of each tenant that an executor was told to run and that have not ended. */
  #runningByTenant(): Map<string, number> {
    const running = new Map<string, number>();
    for (const call of this.#calls.values()) {
      if (call.executor === undefined || call.settled) continue;
      const tenant = tenantOf(call.task);
      running.set(tenant, (running.get(tenant) ?? 0) + 1);
    }
    return running;
  }

  #start(call: RemoteCall, executor: string, attempt: string): void {
    call.executor = executor;
    this.#lastStarted.set(tenantOf(call.task), performance.now());
    // Kept for tenants with calls here; the rest are forgotten once there are many (a tenant
    // forgotten only loses a tie).
    if (this.#lastStarted.size > MAX_REMEMBERED_TENANTS) {
      const present = new Set([...this.#calls.values()].map((each) => tenantOf(each.task)));
      for (const tenant of this.#lastStarted.keys()) if (!present.has(tenant)) this.#lastStarted.delete(tenant);
    }
    call.attempt = attempt;
    this.#watch(executor, call.token);
    this.#send(executor, { type: 'go', token: call.token, attempt });
    call.deadlineAt = performance.now() + taskTimeoutMs(call.task);
    const limitMs = taskTimeoutMs(call.task) + BACKSTOP_GRACE_MS + REMOTE_GRACE_MS;
    call.backstop = setTimeout(() => {
      this.#send(executor, { type: 'cancel', token: call.token, attempt });
      call.settle(fail('TIMEOUT', `did not finish within its deadline, and executor ${executor} did not answer`));
    }, limitMs);
  }

  #onMessage(message: Msg): void {
    const token = message.subject.slice(message.subject.lastIndexOf('.') + 1);
    const body = decode(message.data);
    const call = this.#calls.get(token);
    // Every message names its call's token twice (subject and body); a mismatch is refused. It
    // counts only from the executor and offer attempt that got "go": a late answer to an
    // earlier offer of the same call (a paused executor's "expired") must not re-dispatch it.
    const live = call !== undefined && body?.token === token && call.executor !== undefined && body.executor === call.executor && body.attempt === call.attempt ? call : undefined;
    if (live !== undefined) this.#heard.set(live.executor as string, performance.now());
    switch (body?.type) {
      case 'result':
        if (live === undefined) return;
        live.settle(readOutcome(body.outcome) ?? fail('SANDBOX_CRASH', `executor ${live.executor ?? ''} sent a malformed result`));
        // That executor has a free slot now, one this tenant may use: those lines' heads ask it first.
        this.#wakeHead(`tenant:${tenantOf(live.task)}`, live.executor);
        this.#wakeHead(FLEET, live.executor);
        return;
      case 'expired':
        // The "go" never reached it in time, so the call never ran: offer it again.
        if (live === undefined) return;
        this.#unwatch(live.executor as string, live.token);
        live.executor = undefined;
        live.attempt = undefined;
        clearTimeout(live.backstop);
        void this.#dispatch(live);
        return;
      case 'capability': {
        if (message.reply === undefined) return;
        // Bound to its call: answered only while that call runs, and only by the handler the call was given.
        if (live?.capabilities === undefined || typeof body.name !== 'string' || typeof body.json !== 'string') {
          this.#respond(message, { ok: false, reason: 'the call has ended or has no capabilities' });
          return;
        }
        // A cancelled call's requests are neither asked nor answered (plugin/capability-handler.ts).
        live.capabilities(body.name, body.json).then(
          (json) => this.#respond(message, { ok: true, json }),
          () => this.#respond(message, { ok: false, reason: 'refused' }),
        );
        return;
      }
      default:
        if (message.reply !== undefined) this.#respond(message, { ok: false, reason: 'unknown call' });
    }
  }

  /**
   * Answers an executor's request without ever throwing: one tenant's answer too large for
   * the bus (a big file, a long listing) becomes a small refusal that its plugin sees as the
   * capability failing, never an exception that ends this host and every tenant's calls.
   */
  #respond(message: Msg, answer: CapabilityAnswer): void {
    try {
      let data = encode(answer);
      const limit = this.#options.connection.info?.max_payload;
      if (limit !== undefined && data.length > limit) data = encode({ ok: false, reason: `the answer (${data.length} bytes) is larger than the NATS server carries (max_payload ${limit} bytes)` } satisfies CapabilityAnswer);
      message.respond(data);
    } catch {
      // The connection closed or the answer could not be sent: the executor's request times out, a capability failure.
    }
  }

  /** Probes an executor while it runs calls of this host: one that vanished fails every call it held. */
  #watch(executor: string, token: string): void {
    let watch = this.#watches.get(executor);
    if (watch === undefined) {
      const created: ExecutorWatch = { tokens: new Set(), probes: 0, answeredAt: -Infinity, flushing: false, timer: setInterval(() => this.#probe(executor, created), this.#options.livenessMs) };
      created.timer.unref();
      watch = created;
      this.#watches.set(executor, watch);
    }
    watch.tokens.add(token);
  }

  #unwatch(executor: string, token: string): void {
    const watch = this.#watches.get(executor);
    if (watch === undefined) return;
    watch.tokens.delete(token);
    if (watch.tokens.size > 0) return;
    clearInterval(watch.timer);
    this.#watches.delete(executor);
    this.#heard.delete(executor);
  }

  #probe(executor: string, watch: ExecutorWatch): void {
    // Probes overlap: one sent while the server still routed to a connection that just died
    // waits its whole timeout, but the next one, sent a moment later, is refused at once
    // ("no responders"), so the death is found within a probe interval or two, not 3 s later.
    if (watch.probes >= MAX_PROBES_OUT || watch.flushing || this.#closed) return;
    watch.probes += 1;
    const sent = performance.now();
    this.#options.connection.request(subjects.executor(this.#options.prefix, executor), encode({ type: 'ping' } satisfies ToExecutor), { timeout: PROBE_TIMEOUT_MS }).then(
      () => {
        watch.probes -= 1;
        watch.answeredAt = performance.now();
      },
      (error: unknown) => {
        watch.probes -= 1;
        if (this.#watches.get(executor) !== watch) return;
        const code = errorCode(error);
        const why = code === ErrorCode.NoResponders ? 'died or lost its connection' : code === ErrorCode.Timeout ? `stopped answering for ${PROBE_TIMEOUT_MS} ms` : undefined;
        if (why === undefined) return; // this host's own connection trouble: the backstop still bounds the call
        if (code === ErrorCode.NoResponders) return this.#lost(executor, watch, why);
        // A later probe answered, or a result or request came from it while this one waited: alive.
        if (watch.answeredAt >= sent || (this.#heard.get(executor) ?? -Infinity) >= sent || watch.flushing) return;
        // Its answer may be queued behind other traffic to this host (a burst of 1 MB results,
        // from this executor or another, took 3 s). The server's answer to a flush comes after
        // everything it had queued for this host: a quick one says the line was clear, so the
        // silence is the executor's. A slow one concludes nothing (the next probe asks again, and
        // the call's backstop still bounds it). Traffic alone is no sign of life: another
        // tenant's calls on other executors kept a stopped one's calls waiting past their deadline.
        watch.flushing = true;
        const flushed = performance.now();
        this.#options.connection.flush().then(
          () => {
            watch.flushing = false;
            if (this.#watches.get(executor) !== watch) return;
            if (watch.answeredAt >= sent || (this.#heard.get(executor) ?? -Infinity) >= sent) return;
            // A slow flush defers the verdict, but only while every call the executor holds is
            // within its deadline: a host kept busy by other tenants' traffic must not keep a
            // stopped executor's calls waiting for their backstop.
            if (performance.now() - flushed > CLEAR_LINE_MS && !this.#pastDeadline(watch)) return;
            this.#lost(executor, watch, why);
          },
          () => {
            watch.flushing = false;
          },
        );
      },
    );
  }

  /** Whether a call the executor holds has passed its deadline. */
  #pastDeadline(watch: ExecutorWatch): boolean {
    const now = performance.now();
    for (const token of watch.tokens) if ((this.#calls.get(token)?.deadlineAt ?? Infinity) <= now) return true;
    return false;
  }

  /** The executor is gone or hung: every call it held is answered SANDBOX_CRASH (and cancelled there, should it resume). */
  #lost(executor: string, watch: ExecutorWatch, why: string): void {
    clearInterval(watch.timer);
    this.#watches.delete(executor);
    for (const token of watch.tokens) {
      const call = this.#calls.get(token);
      if (call === undefined) continue;
      // A hung executor may resume: the cancel waits for it, so the call reported crashed is
      // aborted there rather than finishing behind the caller's back (if it has not yet).
      if (call.attempt !== undefined) this.#send(executor, { type: 'cancel', token, attempt: call.attempt });
      call.settle(fail('SANDBOX_CRASH', `executor ${executor} ${why} during the call`));
    }
  }

  #send(executor: string, message: ToExecutor): void {
    try {
      this.#options.connection.publish(subjects.executor(this.#options.prefix, executor), encode(message));
    } catch {
      // A closed connection: the call is answered by its backstop or by close().
    }
  }

  #fingerprintOf(spec: PluginSpec): string {
    let fingerprint = this.#fingerprints.get(spec);
    if (fingerprint === undefined) {
      fingerprint = pluginFingerprint(spec);
      this.#fingerprints.set(spec, fingerprint);
    }
    return fingerprint;
  }

  #noExecutorMessage(plugin: string): string {
    return `no executor serves the ${plugin} plugin (this manifest and module) on ${shownEngineUrl(this.#options.url)}; start one with "airlock executor --connect ${shownEngineUrl(this.#options.url)} --plugins <dir>" holding the same plugin folder; the call was not run`;
  }
}

/** Whose work a task is (plugin loading is nobody's: an empty tenant). */
function tenantOf(task: SandboxTask): string {
  return task.kind === 'call' || task.kind === 'classify' ? task.tenant : '';
}

function remoteTask(task: SandboxTask & { readonly plugin: PluginSpec }): RemoteTask {
  if (task.kind === 'call') return { kind: 'call', tenant: task.tenant, tool: task.tool, callId: task.callId, argsJson: task.argsJson };
  if (task.kind === 'classify') return { kind: 'classify', tenant: task.tenant, calls: task.calls };
  return { kind: 'describe' };
}
