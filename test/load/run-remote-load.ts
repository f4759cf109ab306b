// The remote load run: many tenants' turns through one engine whose sandbox is a fleet of
// `airlock executor` processes on a real nats-server (loopback), with hostile calls mixed
// in; one executor is SIGKILLed a third of the way through and another drained (SIGTERM)
// at two thirds. It counts what must never happen (a lost call, a call run twice, a wrong
// code, a cross-tenant observation) and measures benign latency before and after each
// event, throughput, and the NATS server's CPU per call. Also: throughput with 1, 2, 3
// executors on I/O-bound calls (`runRemoteThroughput`).
import { createEngine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createRemoteSandbox, type Capability } from '@airlock/sandbox';
import { readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { startExecutorProcess, startNats, stopProcess, type ExecutorProcess, type NatsServer } from '../support/nats.js';
import { pluginFolder } from '../support/plugin-harness.js';

export interface RemoteLoadOptions {
  readonly calls: number;
  readonly tenants: number;
  /** Share of hostile calls, 0..1. */
  readonly hostileRatio: number;
  readonly executors?: number;
  /** Calls one tenant may run per executor (`--slots`); each executor has one reserve slot more. */
  readonly slots?: number;
  /** How long each benign call waits on the host (I/O), in ms. */
  readonly ioMs?: number;
  readonly turnSize?: number;
  readonly concurrentTurns?: number;
  /** SIGKILL one executor a third of the way, drain another at two thirds. */
  readonly faults?: boolean;
  readonly seed?: number;
}

export interface Latency {
  readonly calls: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export interface RemoteLoadReport {
  readonly calls: number;
  readonly tenants: number;
  readonly executors: number;
  readonly hostile: number;
  /** Calls without exactly one result. */
  readonly lost: number;
  /** Calls whose tool body started more than once. */
  readonly ranTwice: number;
  /** Calls that ended ABORTED_BEFORE_DISPATCH (or SANDBOX_CRASH) and yet ran, or succeeded without running. */
  readonly notRunMismatch: number;
  readonly wrongCode: number;
  readonly crossTenant: number;
  /** Calls answered SANDBOX_CRASH because their executor was killed under them. */
  readonly crashedByKill: number;
  readonly abortedBeforeDispatch: number;
  /** Benign latency: before the kill, between kill and drain, after the drain. */
  readonly phases: { readonly beforeKill: Latency; readonly afterKill: Latency; readonly afterDrain: Latency };
  readonly drainedExitCode: number | null | undefined;
  readonly throughputPerSecond: number;
  readonly wallSeconds: number;
  /** nats-server CPU time (user + system) per call, µs, over the whole run (off Linux: undefined). */
  readonly natsCpuUsPerCall: number | undefined;
  /** Messages through the server per call (in + out), over the whole run: offers, answers, go, results, capability requests, probes. */
  readonly natsMessagesPerCall: number;
  readonly codes: Readonly<Record<string, number>>;
  readonly mistakes: readonly string[];
}

const HOSTILE: readonly { tool: string; code: string }[] = [
  { tool: 'spin', code: 'CPU_LIMIT' },
  { tool: 'hang', code: 'TIMEOUT' },
  { tool: 'boom', code: 'TOOL_ERROR' },
  { tool: 'flood', code: 'OUTPUT_TOO_LARGE' },
];

function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state * 1664525 + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

function latency(samples: number[]): Latency {
  samples.sort((a, b) => a - b);
  const at = (q: number): number => Math.round((samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0) * 100) / 100;
  return { calls: samples.length, p50Ms: at(0.5), p99Ms: at(0.99) };
}

function cpuUs(pid: number | undefined): number | undefined {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').replace(/^.*\) /, '').split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10_000;
  } catch {
    return undefined;
  }
}

/** The host's capabilities: `mark` counts each call's starts, `sleep` is the I/O a call waits on. */
function hostSide(): { capabilities: Record<string, Capability>; starts: Map<number, number> } {
  const starts = new Map<number, number>();
  return {
    starts,
    capabilities: {
      mark: (argument) => {
        const n = (argument as { n: number }).n;
        starts.set(n, (starts.get(n) ?? 0) + 1);
        return null;
      },
      sleep: (argument, context) => new Promise((resolve) => {
        const timer = setTimeout(() => resolve(null), (argument as { ms: number }).ms);
        context.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(null)), { once: true });
      }),
    },
  };
}

async function fleet(count: number, slots: number): Promise<{ url: string; natsPid: () => number | undefined; messages: NatsServer['messages']; executors: ExecutorProcess[]; dir: string; close: () => Promise<void> }> {
  const nats = await startNats();
  const dir = await pluginFolder('plugins/remote-load.js', { name: 'remote-load', realm: 'warm', capabilities: ['mark', 'sleep'], limits: { memoryMb: 16, cpuMs: 1000, timeoutMs: 3000, maxOutputBytes: 65536 } });
  const executors: ExecutorProcess[] = [];
  try {
    for (let i = 0; i < count; i += 1) executors.push(await startExecutorProcess(nats.url, [dir], ['--slots', String(slots), '--reserve', '1']));
  } catch (error) {
    for (const executor of executors) await stopProcess(executor.child);
    await nats.stop();
    throw error;
  }
  return {
    url: nats.url,
    natsPid: () => nats.pid,
    messages: () => nats.messages(),
    executors,
    dir,
    async close() {
      for (const executor of executors) await stopProcess(executor.child);
      await nats.stop();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

export async function runRemoteLoad(options: RemoteLoadOptions): Promise<RemoteLoadReport> {
  const next = random(options.seed ?? 7);
  const executorCount = options.executors ?? 3;
  const ioMs = options.ioMs ?? 20;
  const turnSize = options.turnSize ?? 10;
  const setup = await fleet(executorCount, options.slots ?? 4);
  const host = hostSide();
  const sandbox = await createRemoteSandbox({ url: setup.url, plugins: [setup.dir], capabilities: host.capabilities, maxInFlight: 64 });
  try {
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    interface Planned { readonly request: ToolCallRequest; readonly expected: string; readonly n: number }
    const turns: { tenant: string; calls: Planned[] }[] = [];
    const plan = new Map<string, Planned[]>();
    let hostile = 0;
    for (let i = 0; i < options.calls; i += 1) {
      const tenant = `tenant-${Math.floor(next() * options.tenants)}`;
      const bad = next() < options.hostileRatio ? HOSTILE[Math.floor(next() * HOSTILE.length)] : undefined;
      if (bad !== undefined) hostile += 1;
      const planned: Planned = bad === undefined
        ? { request: { id: `c${i}`, name: 'probe', arguments: JSON.stringify({ n: i, ms: ioMs }) }, expected: 'ok', n: i }
        : { request: { id: `c${i}`, name: bad.tool, arguments: '{}' }, expected: bad.code, n: i };
      plan.set(tenant, [...(plan.get(tenant) ?? []), planned]);
    }
    for (const [tenant, list] of plan) for (let i = 0; i < list.length; i += turnSize) turns.push({ tenant, calls: list.slice(i, i + turnSize) });
    for (let i = turns.length - 1; i > 0; i -= 1) {
      const j = Math.floor(next() * (i + 1));
      [turns[i], turns[j]] = [turns[j]!, turns[i]!];
    }

    let lost = 0;
    let wrongCode = 0;
    let crossTenant = 0;
    let crashedByKill = 0;
    let abortedBeforeDispatch = 0;
    let notRunMismatch = 0;
    const mistakes: string[] = [];
    const codes: Record<string, number> = {};
    const phaseMs: [number[], number[], number[]] = [[], [], []];
    let phase = 0;
    let drainedExitCode: number | null | undefined;
    const killAt = Math.floor(turns.length / 3);
    const drainAt = Math.floor((2 * turns.length) / 3);
    const drains: Promise<void>[] = [];
    const natsCpuBefore = cpuUs(setup.natsPid());
    const messagesBefore = await setup.messages();
    const started = performance.now();
    let cursor = 0;
    const worker = async (): Promise<void> => {
      while (cursor < turns.length) {
        const index = cursor;
        cursor += 1;
        if (options.faults === true && index === killAt) {
          // Mid-run, with calls in flight on it.
          setup.executors[0]!.child.kill('SIGKILL');
          phase = 1;
        }
        if (options.faults === true && index === drainAt) {
          const drained = setup.executors[1]!;
          drained.child.kill('SIGTERM');
          drains.push(drained.exited.then((code) => void (drainedExitCode = code)));
          phase = 2;
        }
        const turn = turns[index]!;
        const turnPhase = phase;
        const results: ToolResult[] = await engine.run(turn.calls.map((c) => c.request), { tenant: turn.tenant });
        if (results.length !== turn.calls.length) lost += Math.abs(turn.calls.length - results.length);
        turn.calls.forEach((planned, position) => {
          const result = results[position];
          if (result === undefined || result.callId !== planned.request.id) {
            lost += 1;
            return;
          }
          const code = result.isError ? result.error.code : 'ok';
          codes[code] = (codes[code] ?? 0) + 1;
          const runs = planned.expected === 'ok' ? (host.starts.get(planned.n) ?? 0) : undefined;
          if (code === 'ABORTED_BEFORE_DISPATCH') {
            abortedBeforeDispatch += 1;
            if (runs !== undefined && runs !== 0) notRunMismatch += 1;
            return;
          }
          if (code === 'SANDBOX_CRASH' && planned.expected !== 'SANDBOX_CRASH' && options.faults === true) {
            crashedByKill += 1; // in flight on the killed executor
            return;
          }
          if (code !== planned.expected) {
            wrongCode += 1;
            if (mistakes.length < 20) mistakes.push(`${planned.request.name} for ${turn.tenant}: expected ${planned.expected}, got ${code}${result.isError ? ` (${result.error.message})` : ''}`);
            return;
          }
          if (!result.isError) {
            const value = result.value as { n: number; tenant: string; cross: boolean };
            if (value.cross || value.tenant !== turn.tenant) crossTenant += 1;
            if (value.n !== planned.n || runs !== 1) notRunMismatch += 1;
            phaseMs[turnPhase]!.push(result.durationMs);
          }
        });
      }
    };
    await Promise.all(Array.from({ length: options.concurrentTurns ?? 8 }, worker));
    const wallSeconds = (performance.now() - started) / 1000;
    await Promise.all(drains);
    const natsCpuAfter = cpuUs(setup.natsPid());
    const messagesAfter = await setup.messages();
    const ranTwice = [...host.starts.values()].filter((count) => count > 1).length;
    return {
      calls: options.calls,
      tenants: options.tenants,
      executors: executorCount,
      hostile,
      lost,
      ranTwice,
      notRunMismatch,
      wrongCode,
      crossTenant,
      crashedByKill,
      abortedBeforeDispatch,
      phases: { beforeKill: latency(phaseMs[0]), afterKill: latency(phaseMs[1]), afterDrain: latency(phaseMs[2]) },
      drainedExitCode,
      throughputPerSecond: Math.round(options.calls / wallSeconds),
      wallSeconds: Math.round(wallSeconds * 10) / 10,
      natsCpuUsPerCall: natsCpuBefore === undefined || natsCpuAfter === undefined ? undefined : Math.round((natsCpuAfter - natsCpuBefore) / options.calls),
      natsMessagesPerCall: Math.round(((messagesAfter.in - messagesBefore.in + messagesAfter.out - messagesBefore.out) / options.calls) * 10) / 10,
      codes,
      mistakes,
    };
  } finally {
    await sandbox.close();
    await setup.close();
  }
}

/** I/O-bound calls only (each waits `ioMs` on the host): calls per second with this many executors. */
export interface ThroughputRow {
  readonly executors: number;
  readonly callsPerSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly lost: number;
  /** nats-server CPU per call (µs) and messages per call (in + out) at this throughput. */
  readonly natsCpuUsPerCall: number | undefined;
  readonly natsMessagesPerCall: number;
}

export async function runRemoteThroughput(executors: number, options: { calls: number; ioMs: number; slots: number; inFlight: number }): Promise<ThroughputRow> {
  const setup = await fleet(executors, options.slots);
  const host = hostSide();
  const sandbox = await createRemoteSandbox({ url: setup.url, plugins: [setup.dir], capabilities: host.capabilities, maxInFlight: options.inFlight });
  try {
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    // One call per turn, many tenants, so neither the scheduler nor a tenant's share limits it.
    let cursor = 0;
    let lost = 0;
    const samples: number[] = [];
    const cpuBefore = cpuUs(setup.natsPid());
    const messagesBefore = await setup.messages();
    const started = performance.now();
    await Promise.all(Array.from({ length: options.inFlight }, async () => {
      while (cursor < options.calls) {
        const n = cursor;
        cursor += 1;
        const [result] = await engine.run([{ id: `t${n}`, name: 'probe', arguments: JSON.stringify({ n, ms: options.ioMs }) }], { tenant: `tenant-${n % 50}` });
        if (result === undefined || result.isError) lost += 1;
        else samples.push(result.durationMs);
      }
    }));
    const seconds = (performance.now() - started) / 1000;
    const cpuAfter = cpuUs(setup.natsPid());
    const messagesAfter = await setup.messages();
    const figures = latency(samples);
    return {
      executors,
      callsPerSecond: Math.round(options.calls / seconds),
      p50Ms: figures.p50Ms,
      p99Ms: figures.p99Ms,
      lost,
      natsCpuUsPerCall: cpuBefore === undefined || cpuAfter === undefined ? undefined : Math.round((cpuAfter - cpuBefore) / options.calls),
      natsMessagesPerCall: Math.round(((messagesAfter.in - messagesBefore.in + messagesAfter.out - messagesBefore.out) / options.calls) * 10) / 10,
    };
  } finally {
    await sandbox.close();
    await setup.close();
  }
}

/**
 * The engine's own cost per message: raw NATS request-reply (an offer-sized payload, one echo
 * subscriber in a queue group), one at a time and 64 in flight, with the server's CPU per
 * message (in + out counted apart, as /varz does). A remote call is a handful of these.
 */
export async function runNatsRate(): Promise<{ readonly inFlight: number; readonly requestsPerSecond: number; readonly serverCpuUsPerMessage: number | undefined }[]> {
  const { connect } = await import('nats');
  const nats = await startNats();
  const client = await connect({ servers: nats.url });
  const echo = await connect({ servers: nats.url });
  try {
    echo.subscribe('rate.echo', { queue: 'rate', callback: (_error, message) => message.respond(message.data) });
    await echo.flush();
    const payload = new TextEncoder().encode(JSON.stringify({ type: 'offer', token: 'a'.repeat(32), replyTo: 'airlock.host.h.t', task: { kind: 'call', tenant: 't', tool: 'probe', callId: 'c1', argsJson: '{"n":1}' } }));
    const rows = [];
    for (const inFlight of [1, 64]) {
      const total = inFlight === 1 ? 5000 : 50_000;
      const cpuBefore = cpuUs(nats.pid);
      const before = await nats.messages();
      const started = performance.now();
      let sent = 0;
      await Promise.all(Array.from({ length: inFlight }, async () => {
        while (sent < total) {
          sent += 1;
          await client.request('rate.echo', payload, { timeout: 5000 });
        }
      }));
      const seconds = (performance.now() - started) / 1000;
      const cpuAfter = cpuUs(nats.pid);
      const after = await nats.messages();
      const messages = after.in - before.in + after.out - before.out;
      rows.push({
        inFlight,
        requestsPerSecond: Math.round(total / seconds),
        serverCpuUsPerMessage: cpuBefore === undefined || cpuAfter === undefined ? undefined : Math.round(((cpuAfter - cpuBefore) / messages) * 100) / 100,
      });
    }
    return rows;
  } finally {
    await client.close();
    await echo.close();
    await nats.stop();
  }
}
