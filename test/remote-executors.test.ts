// Remote executors against a real nats-server on 127.0.0.1: the results contract holds when
// plugin code runs on `airlock executor` processes. Every call gets exactly one result; a
// killed executor is SANDBOX_CRASH within the deadline; a call no executor took never runs;
// capabilities are answered by the host that made the call, only while that call runs.
import { createEngine, type Engine, type JsonValue, type ToolCallRequest, type ToolFailure, type ToolResult } from '@airlock/core';
import { createCodeMode, createRemoteSandbox, createSandbox, SandboxError, startExecutor, type Capability, type Sandbox } from '@airlock/sandbox';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect, type NatsConnection } from 'nats';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { FIXTURES } from './support/plugin-harness.js';
import { freePort, natsAvailable, startExecutorProcess, startNats, stopProcess, type ExecutorProcess, type NatsServer } from './support/nats.js';
import { airlock, oneLine, ROOT } from './support/run-cli.js';

const PLUGIN = `${FIXTURES}remote/worker`;
const HOST_CAPABILITIES = `${FIXTURES}remote/host.mjs`;
const codes = (results: readonly ToolResult[]): string[] => results.map((result) => (result.isError ? (result as ToolFailure).error.code : 'ok'));
const call = (id: string, name: string, args: Record<string, JsonValue> = { tag: id }): ToolCallRequest => ({ id, name, arguments: JSON.stringify(args) });

/** The host side of the fixture's capabilities: counts each tag's starts, waits on the host, says who called. */
function hostCapabilities() {
  const runs = new Map<string, number>();
  const started = new Map<string, () => void>();
  /** Capability calls made for a call that had already ended or been cancelled: there must be none. */
  const late = { count: 0 };
  const capabilities: Record<string, Capability> = {
    mark: (argument, context) => {
      if (context.signal.aborted) late.count += 1;
      const tag = (argument as { tag: string }).tag;
      runs.set(tag, (runs.get(tag) ?? 0) + 1);
      started.get(tag)?.();
      return null;
    },
    sleep: (argument, context) => new Promise((resolve) => {
      const timer = setTimeout(() => resolve(null), (argument as { ms: number }).ms);
      context.signal.addEventListener('abort', () => (clearTimeout(timer), resolve(null)), { once: true });
    }),
    whoami: (_argument, context) => ({ tenant: context.tenant, plugin: context.plugin, tool: context.tool, callId: context.callId }),
  };
  return {
    capabilities,
    runs,
    late,
    /** Resolves when the call tagged `tag` has started on some executor (its first capability request). */
    startOf: (tag: string) => new Promise<void>((resolve) => started.set(tag, resolve)),
  };
}

const available = natsAvailable();

describe.skipIf(!available)('remote executors (real nats-server)', () => {
  let nats: NatsServer;
  const executors: ExecutorProcess[] = [];
  const cleanups: (() => Promise<unknown>)[] = [];

  beforeAll(async () => {
    nats = await startNats();
  });
  afterAll(async () => {
    await nats?.stop();
  });
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
    for (const executor of executors.splice(0)) await stopProcess(executor.child);
  });

  async function executor(extra: string[] = []): Promise<ExecutorProcess> {
    const started = await startExecutorProcess(nats.url, [PLUGIN], extra);
    executors.push(started);
    return started;
  }

  async function remote(options: { dispatchTimeoutMs?: number } = {}): Promise<{ sandbox: Sandbox; engine: Engine } & ReturnType<typeof hostCapabilities>> {
    const host = hostCapabilities();
    const sandbox = await createRemoteSandbox({ url: nats.url, plugins: [PLUGIN], capabilities: host.capabilities, ...options });
    cleanups.push(() => sandbox.close());
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    return { sandbox, engine, ...host };
  }

  async function rawClient(): Promise<NatsConnection> {
    const connection = await connect({ servers: nats.url });
    cleanups.push(() => connection.close());
    return connection;
  }

  it('gives the same tools, policy, classification and results as the local sandbox', async () => {
    await executor();
    const host = await remote();
    const local = createSandbox({ threads: 2, capabilities: hostCapabilities().capabilities });
    cleanups.push(() => local.close());
    await local.loadPlugins([PLUGIN]);
    expect(host.sandbox.tools().map((tool) => [tool.name, tool.description, tool.parameters])).toEqual(local.tools().map((tool) => [tool.name, tool.description, tool.parameters]));
    expect(host.sandbox.policyRules()).toEqual(local.policyRules());
    const localEngine = createEngine({ sources: [local], policy: { default: 'allow' } });
    const batch = [call('a', 'echo'), call('b', 'whoami'), call('c', 'spin'), call('d', 'exclusive'), call('e', 'nope')];
    const [remoteResults, localResults] = [await host.engine.run(batch, { tenant: 't1' }), await localEngine.run(batch, { tenant: 't1' })];
    expect(codes(remoteResults)).toEqual(['ok', 'ok', 'CPU_LIMIT', 'ok', 'UNKNOWN_TOOL']);
    expect(codes(remoteResults)).toEqual(codes(localResults));
    expect(remoteResults.map((result) => (result.isError ? null : result.value))).toEqual(localResults.map((result) => (result.isError ? null : result.value)));
    // The capability ran on this host, for this call and tenant.
    expect(remoteResults[1]?.isError === false && remoteResults[1].value).toEqual({ tenant: 't1', plugin: 'remote-worker', tool: 'whoami', callId: 'b' });
  });

  it('ends a call whose executor is SIGKILLed mid-call as SANDBOX_CRASH, well within its deadline, run once', async () => {
    const victim = await executor();
    const { engine, runs, startOf } = await remote();
    const started = startOf('doomed');
    const clock = performance.now();
    const pending = engine.run([call('doomed', 'work', { tag: 'doomed', ms: 20_000 })]);
    await started;
    victim.child.kill('SIGKILL');
    const results = await pending;
    expect(codes(results)).toEqual(['SANDBOX_CRASH']);
    expect((results[0] as ToolFailure).error.message).toMatch(/executor [0-9a-f]{32} died/);
    expect(performance.now() - clock).toBeLessThan(8000); // the manifest's timeoutMs
    expect(runs.get('doomed')).toBe(1);
  });

  it('a probe left unanswered when its executor died does not hold the verdict: the next probe finds it gone', async () => {
    // The server routes to a dead connection for a moment after its process dies; a probe sent
    // then waits its whole 3 s. Stopping the executor first leaves such a probe in flight.
    const victim = await executor();
    const { engine, startOf } = await remote();
    const sniffer = await rawClient();
    const started = startOf('doomed');
    const pending = engine.run([call('doomed', 'work', { tag: 'doomed', ms: 20_000 })]);
    await started;
    victim.child.kill('SIGSTOP');
    // A ping sent while it is stopped (unsubscribed at once: a listener would count as a responder).
    let pinged: () => void = () => undefined;
    const ping = new Promise<void>((resolve) => (pinged = resolve));
    sniffer.subscribe(`airlock.exec.${victim.id}`, { max: 1, callback: () => pinged() });
    await sniffer.flush();
    await ping;
    await sniffer.flush();
    victim.child.kill('SIGKILL');
    const [result] = await pending;
    expect(codes([result!])).toEqual(['SANDBOX_CRASH']);
    // Found by a later probe's "no responders", not by the stopped one's timeout.
    expect((result as ToolFailure).error.message).toMatch(/died or lost its connection/);
  });

  it('aborts on a hung executor the call it reported SANDBOX_CRASH, when the executor resumes', async () => {
    const hung = await executor();
    const { engine, startOf } = await remote();
    const connection = await rawClient();
    const outcomes: { code?: string; ok: boolean }[] = [];
    let resultSeen: () => void = () => undefined;
    const resulted = new Promise<void>((resolve) => (resultSeen = resolve));
    connection.subscribe('airlock.host.>', { callback: (_error, message) => {
      const body = JSON.parse(new TextDecoder().decode(message.data)) as { type: string; outcome?: { ok: boolean; code?: string } };
      if (body.type === 'result' && body.outcome !== undefined) {
        outcomes.push(body.outcome);
        resultSeen();
      }
    } });
    await connection.flush();
    const started = startOf('hung');
    const pending = engine.run([call('hung', 'work', { tag: 'hung', ms: 6000 })]);
    await started;
    hung.child.kill('SIGSTOP');
    try {
      expect(codes(await pending)).toEqual(['SANDBOX_CRASH']);
    } finally {
      hung.child.kill('SIGCONT');
    }
    await resulted;
    // What the executor did with it once resumed: aborted, not completed.
    expect(outcomes).toEqual([expect.objectContaining({ ok: false, code: 'ABORTED' })]);
  });

  it('finds a stopped executor while another tenant\'s calls on another executor keep this host busy', async () => {
    // Tenant X's call runs on the victim plugin's executor, tenant Y's chatter on the worker's:
    // Y's traffic reaches this host all along, and must not pass for the stopped executor's life.
    const victimPlugin = `${FIXTURES}remote/victim`;
    const stopped = await startExecutorProcess(nats.url, [victimPlugin]);
    executors.push(stopped);
    await executor();
    const host = hostCapabilities();
    const sandbox = await createRemoteSandbox({ url: nats.url, plugins: [PLUGIN, victimPlugin], capabilities: host.capabilities });
    cleanups.push(() => sandbox.close());
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    const chatter = new AbortController();
    const chattering = engine.run([call('noise', 'chatter')], { tenant: 'Y', signal: chatter.signal });
    const started = host.startOf('victim');
    const pending = engine.run([call('v', 'v_work', { tag: 'victim', ms: 20_000 })], { tenant: 'X' });
    await started;
    const clock = performance.now();
    stopped.child.kill('SIGSTOP');
    try {
      const results = await pending;
      expect(codes(results)).toEqual(['SANDBOX_CRASH']);
      expect((results[0] as ToolFailure).error.message).toMatch(/stopped answering/);
      expect(performance.now() - clock).toBeLessThan(8000); // the manifest's timeoutMs
      expect(host.runs.get('noise')).toBeGreaterThan(0); // the other tenant's traffic did flow meanwhile
    } finally {
      stopped.child.kill('SIGCONT');
      chatter.abort();
      await chattering;
    }
  });

  it('fails fast and clearly when no executor serves the plugin, at load and per call, never running it', async () => {
    const clock = performance.now();
    const error = await createRemoteSandbox({ url: nats.url, plugins: [PLUGIN], capabilities: hostCapabilities().capabilities }).catch((caught: unknown) => caught);
    expect(SandboxError.isInstance(error) && error.code).toBe('INVALID_PLUGIN');
    expect((error as Error).message).toMatch(/no executor serves the remote-worker plugin .*airlock executor --connect/);
    expect(performance.now() - clock).toBeLessThan(2000);

    const only = await executor();
    const { engine, runs } = await remote();
    only.child.kill('SIGKILL');
    await only.exited;
    const results = await engine.run([call('orphan', 'work')]);
    expect(codes(results)).toEqual(['ABORTED_BEFORE_DISPATCH']);
    expect((results[0] as ToolFailure).error.message).toMatch(/no executor serves the remote-worker plugin/);
    expect(runs.get('orphan')).toBeUndefined();
  });

  it('a manifest granting a group of the host\'s own capabilities runs on an executor given the host\'s --capabilities module', async () => {
    const grouped = `${FIXTURES}remote/grouped`;
    const module = `${FIXTURES}remote/group-host.mjs`;
    const { default: functions } = (await import(module)) as { default: Record<string, Capability> };
    // Without the names an executor takes "tally" for one function: its plugin would differ from the host's, and serve none of its calls.
    executors.push(await startExecutorProcess(nats.url, [grouped], ['--capabilities', module]));
    const sandbox = await createRemoteSandbox({ url: nats.url, plugins: [grouped], capabilities: functions });
    cleanups.push(() => sandbox.close());
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    const [result] = await engine.run([call('g', 'tally_sum', { a: 2, b: 3 })]);
    expect(result).toMatchObject({ isError: false, value: { sum: 5, negated: -5 } });
  });

  it('fails fast when the NATS server is unreachable', async () => {
    const port = await freePort();
    const clock = performance.now();
    const error = await createRemoteSandbox({ url: `nats://127.0.0.1:${port}`, plugins: [PLUGIN] }).catch((caught: unknown) => caught);
    expect(SandboxError.isInstance(error) && error.code).toBe('ENGINE_UNREACHABLE');
    expect(performance.now() - clock).toBeLessThan(3000);
  });

  it('applies backpressure when every executor is busy: a call waits for a slot, or ends never run', async () => {
    await executor(['--slots', '1', '--reserve', '0']);
    await executor(['--slots', '1', '--reserve', '0']);
    const { engine, runs, startOf } = await remote();
    // Two slots in the fleet, three calls: two run at once (a call NATS first offered to the
    // busy executor went to the other), the third is refused until a slot frees, then runs once.
    const two = new Promise<void>((resolve) => {
      let count = 0;
      for (const tag of ['a', 'b', 'c']) void startOf(tag).then(() => (count += 1) === 2 && resolve());
    });
    // One call per turn: nothing depends on the classifier's verdict to run them at once.
    const results = Promise.all(['a', 'b', 'c'].map((tag) => engine.run([call(tag, 'work', { tag, ms: 600 })])));
    await two;
    expect(runs.size).toBe(2);
    expect(codes((await results).flat())).toEqual(['ok', 'ok', 'ok']);
    expect([...runs.values()]).toEqual([1, 1, 1]);

    // The fleet is filled by a host with the default dispatch deadline; 200 ms is for 'z' alone.
    // (With 200 ms for 'x' and 'y' too, one of them could end never run on a loaded machine,
    // and the test waited for its start until it timed out; CI's Node 20 leg, once.)
    const impatient = await remote({ dispatchTimeoutMs: 200 });
    const filler = await remote();
    const both = Promise.all([filler.startOf('x'), filler.startOf('y')]);
    const long = Promise.all(['x', 'y'].map((tag) => filler.engine.run([call(tag, 'work', { tag, ms: 3000 })])));
    await Promise.race([both, long.then((results) => Promise.reject(new Error(`x and y ended before both started: ${codes(results.flat()).join(', ')}`)))]);
    const outcome = await impatient.engine.run([call('z', 'work', { tag: 'z' })]);
    expect(codes(outcome)).toEqual(['ABORTED_BEFORE_DISPATCH']);
    expect((outcome[0] as ToolFailure).error.message).toMatch(/no executor took the call within 200 ms .*it was not run/);
    expect(codes((await long).flat())).toEqual(['ok', 'ok']);
    expect(impatient.runs.get('z')).toBeUndefined();
  });

  it('keeps a slot of every executor from any one tenant, so a flood cannot occupy the fleet', async () => {
    await executor(['--slots', '1', '--reserve', '1']);
    const { engine, runs, startOf } = await remote();
    const hogStarted = startOf('hog-1');
    const stopHog = new AbortController();
    let hogDone = false;
    const hog = engine.run([call('hog-1', 'work', { tag: 'hog-1', ms: 20_000 }), call('hog-2', 'work', { tag: 'hog-2' })], { tenant: 'hog', signal: stopHog.signal }).finally(() => (hogDone = true));
    await hogStarted;
    // The hog holds its share (one slot) and its second call waits; another tenant's call runs
    // in the reserve slot and finishes while the hog's first call still holds its own.
    const light = await engine.run([call('light', 'work', { tag: 'light' })], { tenant: 'light' });
    expect(codes(light)).toEqual(['ok']);
    expect(hogDone).toBe(false);
    expect(runs.get('hog-2')).toBeUndefined();
    stopHog.abort();
    expect(codes(await hog)).toEqual(['ABORTED', 'ABORTED_BEFORE_DISPATCH']);
    expect(runs.get('hog-2')).toBeUndefined();
  });

  it('a freed slot goes to the waiting tenant that runs fewest calls, not to the busy tenants\' older calls in line', async () => {
    // Two slots and a reserve: tenant a holds both slots, tenant b the reserve, and b's two
    // further calls wait in line before tenant c's one. First come, first served, b's queued
    // calls would take every slot a frees while b kept calling (an outside tester's find).
    await executor(['--slots', '2', '--reserve', '1']);
    const { engine, runs, startOf } = await remote();
    // Offers seen on the bus, by tag. A call that finds others waiting joins their line without
    // an offer, and only a line's head offers (again and again, while refused).
    const watcher = await rawClient();
    const offered = new Map<string, number>();
    const offeredAtLeast = new Map<string, { times: number; resolve: () => void }>();
    watcher.subscribe('airlock.offer.*', { callback: (_error, message) => {
      const tag = /tag\W+(\w+)\W/.exec(new TextDecoder().decode(message.data))?.[1];
      if (tag === undefined) return;
      offered.set(tag, (offered.get(tag) ?? 0) + 1);
      const wanted = offeredAtLeast.get(tag);
      if (wanted !== undefined && offered.get(tag)! >= wanted.times) wanted.resolve();
    } });
    await watcher.flush();
    const waitingInLine = (tag: string, times: number) => new Promise<void>((resolve) => {
      if ((offered.get(tag) ?? 0) >= times) resolve();
      else offeredAtLeast.set(tag, { times, resolve });
    });
    const stop = new AbortController();
    const long = (tag: string, tenant: string) => engine.run([call(tag, 'work', { tag, ms: 20_000 })], { tenant, signal: stop.signal });
    const cancelA1 = new AbortController();
    const filled = Promise.all(['a1', 'a2', 'b1'].map(startOf));
    const a1 = engine.run([call('a1', 'work', { tag: 'a1', ms: 20_000 })], { tenant: 'a', signal: cancelA1.signal });
    const busy = [long('a2', 'a'), long('b1', 'b')];
    await filled;
    const b2InLine = waitingInLine('b2', 2);
    const queued = [long('b2', 'b')];
    await b2InLine;
    queued.push(long('b3', 'b')); // joins the line behind b2 without an offer of its own
    const cStarted = startOf('c1');
    // c1 joins the line too; it offers only as the line's head.
    const cInLine = waitingInLine('c1', 1);
    const c1 = engine.run([call('c1', 'work', { tag: 'c1' })], { tenant: 'c' });
    await cInLine;
    cancelA1.abort();
    await cStarted;
    expect(runs.get('b2')).toBeUndefined();
    expect(runs.get('b3')).toBeUndefined();
    expect(codes(await c1)).toEqual(['ok']);
    expect(codes(await a1)).toEqual(['ABORTED']);
    stop.abort();
    await Promise.all([...busy, ...queued]);
  });

  it('Code Mode refuses a remote sandbox at once: programs run on local sandbox processes only', async () => {
    await executor();
    const { sandbox, engine } = await remote();
    expect(() => createCodeMode({ engine, sandbox })).toThrow(expect.objectContaining({ code: 'INVALID_OPTION', message: expect.stringContaining('options.sandbox must be a local sandbox (createSandbox)') }));
  });

  it('drains on SIGTERM: the call in flight finishes, new calls go elsewhere, the executor exits 0', async () => {
    const draining = await executor(['--slots', '4']);
    const { engine, runs, startOf } = await remote();
    const started = startOf('inflight');
    const inflight = engine.run([call('inflight', 'work', { tag: 'inflight', ms: 1000 })]);
    await started;
    const other = await executor();
    draining.child.kill('SIGTERM');
    await new Promise<void>((resolve) => draining.child.stderr?.on('data', (chunk: Buffer) => chunk.toString().includes('draining') && resolve()));
    const after = await engine.run([call('after', 'echo')]);
    expect(codes(after)).toEqual(['ok']);
    expect(codes(await inflight)).toEqual(['ok']);
    expect(await draining.exited).toBe(0);
    expect(runs.get('inflight')).toBe(1);
    expect(other.child.exitCode).toBeNull();
  });

  it('fails only the call whose capability answer is larger than the bus carries; the host serves the next call', async () => {
    await executor();
    const host = hostCapabilities();
    // Quotes double in size when escaped: this answer is over NATS's default 1 MiB max_payload only once encoded.
    const sandbox = await createRemoteSandbox({ url: nats.url, plugins: [PLUGIN], capabilities: { ...host.capabilities, whoami: () => '"'.repeat(700_000) } });
    cleanups.push(() => sandbox.close());
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    const [big] = await engine.run([call('big', 'whoami')]);
    expect(big?.isError).toBe(true);
    expect(codes(await engine.run([call('next', 'echo')]))).toEqual(['ok']);
  });

  it('answers a result larger than the bus carries at once as OUTPUT_TOO_LARGE, not by a backstop TIMEOUT', async () => {
    await executor();
    const host = hostCapabilities();
    // The capability answer fits NATS's default 1 MiB max_payload; the result, with its envelope, does not.
    const sandbox = await createRemoteSandbox({ url: nats.url, plugins: [PLUGIN], capabilities: { ...host.capabilities, whoami: () => 'a'.repeat(1_048_500) } });
    cleanups.push(() => sandbox.close());
    const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    const clock = performance.now();
    const [big] = await engine.run([call('big', 'whoami')]);
    expect(codes([big as ToolResult])).toEqual(['OUTPUT_TOO_LARGE']);
    expect((big as ToolFailure).error.message).toMatch(/max_payload/);
    expect(performance.now() - clock).toBeLessThan(8000); // the manifest's timeoutMs: no backstop
  });

  it('refuses arguments that outgrow the bus once escaped inside the offer, saying so, never running the call', async () => {
    await executor();
    const { engine, runs } = await remote();
    // 400,000 quotes: 800 KB of argument JSON, within the pipeline's 1 MiB; 1.6 MB inside the offer.
    const [big] = await engine.run([call('quotes', 'work', { tag: '"'.repeat(400_000) })]);
    expect(codes([big as ToolResult])).toEqual(['ABORTED_BEFORE_DISPATCH']);
    expect((big as ToolFailure).error.message).toMatch(/arguments, escaped inside its offer \(\d+ bytes\), are larger than .* carries \(max_payload 1048576 bytes\)/);
    expect(runs.size).toBe(0);
  });

  it('takes the user and password, or the token, written in the URL, and never shows them', async () => {
    const guarded = await startNats(['--user', 'airlock', '--pass', 's3cret']);
    cleanups.push(() => guarded.stop());
    const withPassword = guarded.url.replace('nats://', 'nats://airlock:s3cret@');
    const served = await startExecutorProcess(withPassword, [PLUGIN]);
    executors.push(served);
    expect(served.stderr()).toContain(`on ${guarded.url.replace('nats://', 'nats://***@')}`);
    const sandbox = await createRemoteSandbox({ url: withPassword, plugins: [PLUGIN], capabilities: hostCapabilities().capabilities });
    cleanups.push(() => sandbox.close());
    expect(codes(await createEngine({ sources: [sandbox], policy: { default: 'allow' } }).run([call('a', 'echo')]))).toEqual(['ok']);
    // A wrong password: refused, in words that say so and show no secret.
    const refused = await createRemoteSandbox({ url: guarded.url.replace('nats://', 'nats://airlock:wrong@'), plugins: [PLUGIN] }).then(
      () => 'connected',
      (error: Error) => error.message,
    );
    expect(refused).toContain('refused the credentials');
    expect(refused).toContain('nats://***@');
    expect(refused).not.toContain('wrong');
    const tokened = await startNats(['--auth', 't0ken']);
    cleanups.push(() => tokened.stop());
    const byToken = await startExecutorProcess(tokened.url.replace('nats://', 'nats://t0ken@'), [PLUGIN]);
    executors.push(byToken);
    expect(byToken.stderr()).not.toContain('t0ken');
  });

  it('docs/security.md\'s NATS permissions, as written, serve each host and keep the hosts apart', async () => {
    // The configuration block of docs/security.md, "The bus must be private", verbatim.
    const doc = readFileSync(join(ROOT, 'docs/security.md'), 'utf8');
    const block = /```conf\n([\s\S]*?authorization \{[\s\S]*?)```/.exec(doc)?.[1];
    expect(block, 'the conf block in docs/security.md').toBeDefined();
    const folder = mkdtempSync(join(tmpdir(), 'airlock-nats-'));
    cleanups.push(async () => rmSync(folder, { recursive: true, force: true }));
    const config = join(folder, 'nats.conf');
    writeFileSync(config, block!.replace(/^ {2}/gm, ''));
    const guarded = await startNats(['-c', config]);
    cleanups.push(() => guarded.stop());
    const as = (user: string): string => guarded.url.replace('nats://', `nats://${user}:${user}-secret@`);
    executors.push(await startExecutorProcess(as('executor'), [PLUGIN]));
    // Both hosts run calls, capability round trips included, each under its own group.
    const hosts = await Promise.all(['web', 'billing'].map(async (group) => {
      const host = hostCapabilities();
      const sandbox = await createRemoteSandbox({ url: as(group), hostGroup: group, plugins: [PLUGIN], capabilities: host.capabilities });
      cleanups.push(() => sandbox.close());
      return createEngine({ sources: [sandbox], policy: { default: 'allow' } });
    }));
    for (const engine of hosts) {
      const results = await engine.run([call('a', 'echo'), call('b', 'whoami')], { tenant: 't1' });
      expect(codes(results)).toEqual(['ok', 'ok']);
      expect(results[1]?.isError === false && results[1].value).toEqual({ tenant: 't1', plugin: 'remote-worker', tool: 'whoami', callId: 'b' });
    }
    // billing's credentials can neither read web's calls nor answer in an executor's place.
    const rogue = await connect({ servers: guarded.url, user: 'billing', pass: 'billing-secret' });
    cleanups.push(() => rogue.close());
    const refusal = (subject: string): Promise<string> => new Promise((resolve) => {
      rogue.subscribe(subject, { callback: (error) => error !== null && resolve(error.message) });
    });
    for (const subject of ['airlock.host.web.>', 'airlock.host.>', 'airlock.offer.>', 'airlock.exec.>']) {
      expect(await refusal(subject)).toMatch(/permissions violation/i);
    }
  });

  it('an executor drained while its NATS server is down still exits 0', async () => {
    const own = await startNats();
    let running = true;
    cleanups.push(async () => running && (await own.stop()));
    const lonely = await startExecutorProcess(own.url, [PLUGIN]);
    executors.push(lonely);
    await own.stop();
    running = false;
    lonely.child.kill('SIGTERM');
    expect(await lonely.exited).toBe(0);
  });

  it('a host closed while its NATS server is down closes its connection, and its process exits', async () => {
    const own = await startNats();
    let running = true;
    cleanups.push(async () => running && (await own.stop()));
    executors.push(await startExecutorProcess(own.url, [PLUGIN]));
    // The embedder's process: a call, then (told the server is gone) another, then close.
    const script = `
      import { createEngine } from '@airlock/core';
      import { createRemoteSandbox } from '@airlock/sandbox';
      const { default: capabilities } = await import(process.env.HOST_CAPABILITIES);
      const sandbox = await createRemoteSandbox({ url: process.env.NATS_URL, plugins: [process.env.PLUGIN], capabilities });
      const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
      const code = async (id) => { const [result] = await engine.run([{ id, name: 'echo', arguments: JSON.stringify({ tag: id }) }]); return result.isError ? result.error.code : 'ok'; };
      console.log('first', await code('a'));
      process.stdin.once('data', async () => {
        process.stdin.destroy();
        console.log('second', await code('b'));
        await sandbox.close();
        console.log('closed');
      });`;
    const child = spawn(process.execPath, ['--no-node-snapshot', '--input-type=module', '-e', script], { cwd: join(ROOT, 'test'), env: { ...process.env, NATS_URL: own.url, PLUGIN, HOST_CAPABILITIES }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    cleanups.push(async () => child.exitCode === null && child.kill('SIGKILL'));
    await expect.poll(() => `${stdout}${stderr}`, { timeout: 15_000 }).toContain('first ok');
    await own.stop();
    running = false;
    child.stdin.write('the server is gone\n');
    // Before, drain returned with the connection still reconnecting: the process never exited.
    expect(await exited).toBe(0);
    expect(stdout).toMatch(/second (?!ok)\w+\nclosed\n$/);
  }, 60_000);

  it('cancels a running remote call: ABORTED, and the executor takes the next one', async () => {
    await executor(['--slots', '1', '--reserve', '0']);
    const { engine, startOf } = await remote();
    const controller = new AbortController();
    const started = startOf('long');
    const pending = engine.run([call('long', 'work', { tag: 'long', ms: 20_000 })], { signal: controller.signal });
    await started;
    controller.abort();
    expect(codes(await pending)).toEqual(['ABORTED']);
    expect(codes(await engine.run([call('next', 'echo')]))).toEqual(['ok']);
  });

  it('runs no capability of a cancelled call on the host, though its plugin asks on until the executor stops it', async () => {
    await executor();
    const { engine, startOf, late } = await remote();
    const connection = await rawClient();
    const results = new Map<string, () => void>();
    // The executor's own answer for a call comes once its plugin was stopped: wait for it.
    connection.subscribe('airlock.host.>', { callback: (_error, message) => {
      const body = JSON.parse(new TextDecoder().decode(message.data)) as { type: string; token: string };
      if (body.type === 'result') for (const resolve of results.values()) resolve();
    } });
    await connection.flush();
    for (let round = 0; round < 10; round += 1) {
      const tag = `chatter-${round}`;
      const controller = new AbortController();
      const started = startOf(tag);
      const stopped = new Promise<void>((resolve) => results.set(tag, resolve));
      const pending = engine.run([call(tag, 'chatter', { tag })], { signal: controller.signal });
      await started;
      controller.abort();
      expect(codes(await pending)).toEqual(['ABORTED']);
      await stopped;
      results.delete(tag);
    }
    expect(late.count).toBe(0);
  });

  describe('a rogue member of the executors queue group', () => {
    /** Joins the fleet's queue group and accepts offers, to act on what it learns. */
    async function rogue(onOffer: (offer: { token: string; attempt: string; replyTo: string }, id: string) => 'accept-then-expire' | 'accept' | 'busy'): Promise<NatsConnection> {
      const connection = await rawClient();
      const id = 'f'.repeat(32);
      connection.subscribe('airlock.exec.' + id, { callback: (_error, message) => { if (message.reply !== undefined) message.respond(new TextEncoder().encode('{"ok":true}')); } });
      connection.subscribe('airlock.offer.*', { queue: 'airlock-executors', callback: (_error, message) => {
        const offer = JSON.parse(new TextDecoder().decode(message.data)) as { token: string; attempt: string; replyTo: string };
        const choice = onOffer(offer, id);
        message.respond(new TextEncoder().encode(JSON.stringify(choice === 'busy' ? { accepted: false, reason: 'busy' } : { accepted: true, executor: id })));
        if (choice === 'accept-then-expire') setTimeout(() => connection.publish(offer.replyTo, new TextEncoder().encode(JSON.stringify({ type: 'expired', token: offer.token, attempt: offer.attempt, executor: id }))), 20);
      } });
      await connection.flush();
      return connection;
    }

    it('a call whose accepting executor never got its "go" is offered again and runs exactly once elsewhere', async () => {
      await executor();
      const { engine, runs } = await remote();
      let intercepted = 0;
      await rogue(() => (intercepted === 0 ? ((intercepted += 1), 'accept-then-expire') : 'busy'));
      // NATS picks a queue member at random: keep calling until the rogue took one offer.
      for (let index = 0; index < 40 && intercepted === 0; index += 1) {
        expect(codes(await engine.run([call(`r${index}`, 'work', { tag: `r${index}` })]))).toEqual(['ok']);
      }
      expect(intercepted).toBe(1);
      expect([...runs.values()].every((count) => count === 1)).toBe(true);
    });

    it('a late "expired" from another offer attempt of a running call is ignored: it runs once, its result kept', async () => {
      await executor();
      const { engine, runs, startOf } = await remote();
      // Sees every offer and "go" (like a paused executor that got an earlier offer of the call).
      const connection = await rawClient();
      const offers: { token: string; attempt: string; replyTo: string }[] = [];
      let running: string | undefined;
      connection.subscribe('airlock.offer.*', { callback: (_error, message) => void offers.push(JSON.parse(new TextDecoder().decode(message.data)) as { token: string; attempt: string; replyTo: string }) });
      connection.subscribe('airlock.exec.*', { callback: (_error, message) => {
        if ((JSON.parse(new TextDecoder().decode(message.data)) as { type: string }).type === 'go') running = message.subject.slice('airlock.exec.'.length);
      } });
      await connection.flush();
      const started = startOf('once');
      const pending = engine.run([call('once', 'work', { tag: 'once', ms: 1500 })]);
      await started;
      const offer = offers[0] as { token: string; attempt: string; replyTo: string };
      expect(running).toMatch(/^[0-9a-f]{32}$/);
      const expired = (attempt: string, executor: string): void => connection.publish(offer.replyTo, new TextEncoder().encode(JSON.stringify({ type: 'expired', token: offer.token, attempt, executor })));
      // Another executor's late reservation lapsing, and an older attempt on the running executor.
      expired(offer.attempt, 'e'.repeat(32));
      expired('a'.repeat(32), running as string);
      await connection.flush();
      const results = await pending;
      expect(codes(results)).toEqual(['ok']);
      expect(runs.get('once')).toBe(1);
      expect(offers.filter((seen) => seen.token === offer.token)).toHaveLength(1);
    });

    it('cannot get capability answers for a call once it ended, nor with a token that is not its own', async () => {
      await executor();
      const { engine } = await remote();
      let captured: { token: string; attempt: string; replyTo: string } | undefined;
      const connection = await rogue((offer) => {
        if (captured !== undefined) return 'busy';
        captured = offer;
        return 'accept';
      });
      const encoder = new TextEncoder();
      const ask = async (subject: string, token: string, attempt = (captured as { attempt: string }).attempt): Promise<unknown> => JSON.parse(new TextDecoder().decode((await connection.request(subject, encoder.encode(JSON.stringify({ type: 'capability', token, attempt, executor: 'f'.repeat(32), name: 'whoami', json: '{}' })), { timeout: 2000 })).data));
      let pending: Promise<ToolResult[]> | undefined;
      for (let index = 0; index < 40 && captured === undefined; index += 1) {
        const run = engine.run([call(`c${index}`, 'whoami')], { tenant: 'victim' });
        await new Promise((resolve) => setTimeout(resolve, 50));
        if (captured === undefined) await run;
        else pending = run;
      }
      const offer = captured as { token: string; replyTo: string };
      // While the call runs, the one executor told to run it may ask (it is trusted infrastructure).
      expect(await ask(offer.replyTo, offer.token)).toMatchObject({ ok: true });
      // Another offer attempt of the same call is refused.
      expect(await ask(offer.replyTo, offer.token, 'c'.repeat(32))).toEqual({ ok: false, reason: expect.any(String) });
      // A body naming another token than its subject is refused.
      expect(await ask(offer.replyTo, 'a'.repeat(32))).toEqual({ ok: false, reason: expect.any(String) });
      // Another call's subject under the same host, with a guessed token: refused.
      const guessed = offer.replyTo.replace(/[0-9a-f]{32}$/, 'b'.repeat(32));
      expect(await ask(guessed, 'b'.repeat(32))).toEqual({ ok: false, reason: expect.any(String) });
      // The call ends (the rogue answers it); after that the same token gets nothing.
      connection.publish(offer.replyTo, encoder.encode(JSON.stringify({ type: 'result', token: offer.token, attempt: (captured as { attempt: string }).attempt, executor: 'f'.repeat(32), outcome: { ok: true, json: '"forged"', usage: {} } })));
      const results = await (pending as Promise<ToolResult[]>);
      expect(results).toHaveLength(1);
      expect(await ask(offer.replyTo, offer.token)).toEqual({ ok: false, reason: expect.any(String) });
    });
  });

  describe('the command line', () => {
    it('airlock executor: help, bad input and an unreachable server are one-line exit-2 errors', async () => {
      const help = await airlock(['executor', '--help']);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(/--connect <url>/);
      expect(help.stdout).toMatch(/SIGTERM/);
      const cases: [string[], RegExp][] = [
        [['executor', '--plugins', PLUGIN], /--connect <url> is required/],
        [['executor', '--connect', nats.url], /--plugins <dir> is required/],
        [['executor', '--connect', 'http://127.0.0.1:1', '--plugins', PLUGIN], /must start with nats:\/\//],
        [['executor', '--connect', 'redis://127.0.0.1:6379', '--plugins', PLUGIN], /NATS, not Redis/],
        [['executor', '--connect', nats.url, '--plugins', PLUGIN, '--slots', '0'], /--slots must be a whole number, at least 1/],
        [['executor', '--connect', nats.url, '--plugins', PLUGIN, '--capabilities', 'no-such-module.mjs'], /--capabilities no-such-module\.mjs: no such module/],
        [['executor', '--connect', `nats://127.0.0.1:${await freePort()}`, '--plugins', PLUGIN], /cannot reach the NATS server/],
        [['run', '-', '--plugins', PLUGIN, '--capabilities', HOST_CAPABILITIES, '--executors', `nats://127.0.0.1:${await freePort()}`], /cannot reach the NATS server/],
        [['run', '-', '--plugins', PLUGIN, '--code-mode', '--executors', nats.url], /--code-mode cannot run with --executors/],
        [['serve', '--plugins', PLUGIN, '--code-mode', '--executors', nats.url], /--code-mode cannot run with --executors/],
      ];
      for (const [args, message] of cases) {
        const run = await airlock(args, { input: JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'a', type: 'function', function: { name: 'echo', arguments: '{}' } }] }) });
        expect(run.code, args.join(' ')).toBe(2);
        expect(oneLine(run.stderr)).toMatch(message);
      }
    }, 120_000);

    it('airlock run --executors runs the calls on an executor process', async () => {
      await executor();
      const message = { role: 'assistant', tool_calls: [{ id: 'e1', type: 'function', function: { name: 'echo', arguments: '{"tag":"via-cli"}' } }] };
      const run = await airlock(['run', '-', '--plugins', PLUGIN, '--capabilities', HOST_CAPABILITIES, '--executors', nats.url, '--json', '--tenant', 'cli'], { input: JSON.stringify(message) });
      expect(run.code, run.stderr).toBe(0);
      const report = JSON.parse(run.stdout) as { results: { isError: boolean; value: unknown }[] };
      expect(report.results).toEqual([expect.objectContaining({ isError: false, value: { tag: 'via-cli', tenant: 'cli' } })]);
    });

    it('run places the host on the bus with --subject-prefix and --host-group, and refuses them without --executors', async () => {
      executors.push(await startExecutorProcess(nats.url, [PLUGIN], ['--subject-prefix', 'blue.fleet']));
      const sniffer = await rawClient();
      const seen: string[] = [];
      sniffer.subscribe('blue.fleet.host.>', { callback: (_error, message) => seen.push(message.subject) });
      await sniffer.flush();
      const message = { role: 'assistant', tool_calls: [{ id: 'e1', type: 'function', function: { name: 'echo', arguments: '{"tag":"blue"}' } }] };
      const flags = ['--subject-prefix', 'blue.fleet', '--host-group', 'web'];
      const run = await airlock(['run', '-', '--plugins', PLUGIN, '--capabilities', HOST_CAPABILITIES, '--executors', nats.url, ...flags, '--json'], { input: JSON.stringify(message) });
      expect(run.code, run.stderr).toBe(0);
      expect((JSON.parse(run.stdout) as { results: { isError: boolean }[] }).results).toEqual([expect.objectContaining({ isError: false })]);
      expect(seen.length).toBeGreaterThan(0);
      for (const subject of seen) expect(subject).toMatch(/^blue\.fleet\.host\.web\.[0-9a-f]{32}\./);
      for (const [flag, value] of [['--host-group', 'web'], ['--subject-prefix', 'blue']]) {
        const stray = await airlock(['run', '-', '--plugins', PLUGIN, flag!, value!], { input: JSON.stringify(message) });
        expect(stray.code).toBe(2);
        expect(oneLine(stray.stderr)).toBe(`airlock: ${flag} places this host on an executor fleet's bus: give --executors <url> too`);
      }
      const bad = await airlock(['run', '-', '--plugins', PLUGIN, '--executors', nats.url, '--host-group', 'a.b'], { input: JSON.stringify(message) });
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('--host-group must be 1-64 letters');
    });
  });
});

describe('remote executor options (no server needed)', () => {
  it('names the bad option by path, before connecting', async () => {
    const cases: [Parameters<typeof createRemoteSandbox>[0], RegExp][] = [
      [{ url: 'http://127.0.0.1:4222' }, /options\.url: "http:\/\/127\.0\.0\.1:4222" must start with nats:\/\//],
      [{ url: 'redis://127.0.0.1:6379' }, /options\.url: executors are reached over NATS, not Redis/],
      [{ url: '' }, /options\.url must be a nats:\/\/ URL/],
      [{ url: 'nats://127.0.0.1:1', maxInFlight: 0 }, /options\.maxInFlight must be a whole number from 1 to 1024/],
      [{ url: 'nats://127.0.0.1:1', dispatchTimeoutMs: 1.5 }, /options\.dispatchTimeoutMs must be a whole number/],
      [{ url: 'nats://127.0.0.1:1', livenessMs: 1 }, /options\.livenessMs must be a whole number from 10/],
      [{ url: 'nats://127.0.0.1:1', subjectPrefix: 'a b' }, /options\.subjectPrefix must be dot-separated/],
      [{ url: 'nats://127.0.0.1:1', subjectPrefix: 'a.>' }, /options\.subjectPrefix must be dot-separated/],
      [{ url: 'nats://127.0.0.1:1', hostGroup: 'web.eu' }, /options\.hostGroup must be 1-64 letters, digits, "-" or "_" \(one NATS subject token\)/],
      [{ url: 'nats://127.0.0.1:1', hostGroup: '*' }, /options\.hostGroup must be 1-64/],
    ];
    for (const [options, message] of cases) {
      const error = await createRemoteSandbox(options).catch((caught: unknown) => caught);
      expect(SandboxError.isInstance(error) && error.code, JSON.stringify(options)).toBe('INVALID_OPTION');
      expect((error as Error).message).toMatch(message);
    }
    const executorError = await startExecutor({ url: 'nats://127.0.0.1:1', plugins: [PLUGIN], capabilityNames: ['tally.add', 'Bad Name'] }).catch((caught: unknown) => caught);
    expect(SandboxError.isInstance(executorError) && executorError.code).toBe('INVALID_OPTION');
    expect((executorError as Error).message).toBe('options.capabilityNames.1 ("Bad Name") is not a capability name (a letter, then letters, digits, "_" or ".")');
  });
});
