// Call-scoped execution: no plugin code runs, and no capability answers, outside its own
// watched call. One hostile fixture per finding of the outside review; each test asserts
// the exact code, that a call of *another tenant* is answered correctly right after, and
// that no request reaches a capability as the wrong tenant.
import { createEngine, type Engine, type JsonValue, type ToolFailure, type ToolResult } from '@airlock/core';
import { createSandbox, type Capability, type Sandbox, type SandboxOptions } from '@airlock/sandbox';
import { createTestSandbox, sandboxProcessIds, type TestingHooks } from '@airlock/sandbox/testing';
import { rm } from 'node:fs/promises';
import { afterEach, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

interface Seen {
  readonly name: string;
  readonly tenant: string;
  readonly callId: string;
  readonly from: unknown;
}

interface Setup {
  readonly sandbox: Sandbox;
  readonly engine: Engine;
  readonly seen: Seen[];
  readonly stores: Map<string, Map<string, JsonValue>>;
  call(tool: string, tenant: string, id?: string, args?: JsonValue): Promise<ToolResult>;
}

const dirs: string[] = [];
const sandboxes: Sandbox[] = [];
afterEach(async () => {
  await Promise.all(sandboxes.splice(0).map((sandbox) => sandbox.close()));
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** kv capabilities that record who asked, as the host saw it, and keep one store per tenant. */
function kvCapabilities(seen: Seen[], stores: Map<string, Map<string, JsonValue>>): Record<string, Capability> {
  const store = (tenant: string): Map<string, JsonValue> => {
    if (!stores.has(tenant)) stores.set(tenant, new Map());
    return stores.get(tenant)!;
  };
  return {
    'kv.get': (argument, context) => {
      const { key, from } = argument as { key: string; from?: unknown };
      seen.push({ name: 'kv.get', tenant: context.tenant, callId: context.callId, from: from ?? null });
      return store(context.tenant).get(key) ?? null;
    },
    'kv.set': (argument, context) => {
      const { key, value, from } = argument as { key: string; value: JsonValue; from?: unknown };
      seen.push({ name: 'kv.set', tenant: context.tenant, callId: context.callId, from: from ?? null });
      store(context.tenant).set(key, value);
      return true;
    },
  };
}

async function open(plugins: { fixture: string; manifest?: Record<string, unknown> }[], options: SandboxOptions & TestingHooks = {}, extra: Record<string, Capability> = {}): Promise<Setup> {
  const seen: Seen[] = [];
  const stores = new Map<string, Map<string, JsonValue>>();
  const sandbox = createTestSandbox({ threads: 1, ...options, capabilities: { ...kvCapabilities(seen, stores), ...extra } });
  sandboxes.push(sandbox);
  const folders = await Promise.all(plugins.map(({ fixture, manifest }) => pluginFolder(fixture, { limits: { memoryMb: 16, timeoutMs: 1000, cpuMs: 200 }, ...manifest })));
  dirs.push(...folders);
  await sandbox.loadPlugins(folders);
  const engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow', rules: sandbox.policyRules() }, preSchedule: sandbox.preSchedule });
  return {
    sandbox,
    engine,
    seen,
    stores,
    async call(tool, tenant, id = `${tool}-${tenant}-${Math.random().toString(36).slice(2, 8)}`, args = {}) {
      const [result] = await engine.run([{ id, name: tool, arguments: JSON.stringify(args) }], { tenant });
      return result!;
    },
  };
}

const code = (result: ToolResult): string | undefined => (result as ToolFailure).error?.code;
const KV = ['kv.get', 'kv.set'];

for (const mode of ['process', 'in-process'] as const) {
  describe(`capability requests belong to their call (${mode} mode)`, () => {
    const variants = [
      { label: 'fresh realms, one plugin', realm: 'fresh', victim: { tool: 'read_secret', plugin: undefined } },
      { label: 'warm realms, one plugin', realm: 'warm', victim: { tool: 'read_secret', plugin: undefined } },
      { label: 'fresh realms, across plugins', realm: 'fresh', victim: { tool: 'remember', plugin: 'plugins/capabilities.js' } },
    ] as const;
    it.each(variants)('leftover-capability-loop.js ($label): the loop is refused once its call ended, and never acts as another tenant', async ({ realm, victim }) => {
      const plugins = [{ fixture: 'hostile/leftover-capability-loop.js', manifest: { realm, capabilities: KV } }];
      if (victim.plugin !== undefined) plugins.push({ fixture: victim.plugin, manifest: { realm, capabilities: KV } });
      const setup = await open(plugins, { mode });
      setup.stores.set('victim', new Map([['secret', 'the victim secret']]));

      expect(await setup.call('attack', 'attacker', 'attack-1')).toMatchObject({ isError: false, value: 'started' });
      const attackRequestsAtEnd = setup.seen.filter((entry) => entry.from === 'attack').length;
      // The victim keeps the only worker busy with its own capability traffic.
      for (let round = 0; round < 5; round += 1) {
        expect(await setup.call(victim.tool, 'victim', `victim-${round}`, { key: 'secret' })).toMatchObject({ isError: false, value: 'the victim secret' });
      }
      expect(await setup.call('benign', 'attacker', 'benign-1', { text: 'after' })).toMatchObject({ isError: false, value: { echoed: 'after' } });

      const fromAttack = setup.seen.filter((entry) => entry.from === 'attack');
      expect(fromAttack.every((entry) => entry.tenant === 'attacker' && entry.callId === 'attack-1')).toBe(true);
      expect(fromAttack).toHaveLength(attackRequestsAtEnd); // nothing more reached the host after the call ended
      expect(setup.seen.filter((entry) => entry.tenant === 'victim').every((entry) => entry.callId.startsWith('victim-'))).toBe(true);
      expect(setup.stores.get('victim')?.has('stolen') ?? false).toBe(false);
      expect(setup.stores.get('attacker')?.get('stolen') ?? null).not.toBe('the victim secret');
    });

    it.each(['fresh', 'warm'])('answer-raced-with-return.js (%s realms): an answer the host gave before it saw the tool return runs nothing in the realm', async (realm) => {
      const setup = await open([{ fixture: 'hostile/answer-raced-with-return.js', manifest: { realm, capabilities: KV } }], { mode });
      expect(await setup.call('attack', 'attacker', 'attack-1')).toMatchObject({ isError: false, value: 'returned' });
      // The request reached the host (and was answered) while the call ran: the race was run.
      expect(setup.seen).toEqual([{ name: 'kv.get', tenant: 'attacker', callId: 'attack-1', from: 'raced' }]);
      expect(await setup.call('benign', 'victim', 'victim-1', { text: 'next' })).toMatchObject({ isError: false, value: { echoed: 'next' } });
    });

    it.each(['fresh', 'warm'])('late-handler-spin.js (%s realms): an answer that arrives after the call ended runs nothing, and the worker keeps serving every tenant', async (realm) => {
      let answer!: (value: JsonValue) => void;
      const late = new Promise<JsonValue>((resolve) => {
        answer = resolve;
      });
      const setup = await open([{ fixture: 'hostile/late-handler-spin.js', manifest: { realm, capabilities: ['slow'] } }], { mode }, { slow: () => late });
      // The victim's sandbox process is started first: its cold start is not what is timed below.
      expect(await setup.call('benign', 'victim', 'victim-0', { text: 'warm' })).toMatchObject({ isError: false });
      expect(await setup.call('attack', 'attacker')).toMatchObject({ isError: false, value: 'returned' });
      answer({ now: 'too late' });
      await late;
      const started = performance.now();
      expect(await setup.call('benign', 'victim', 'victim-1', { text: 'served' })).toMatchObject({ isError: false, value: { echoed: 'served' } });
      expect(await setup.call('benign', 'attacker', 'attacker-2', { text: 'served' })).toMatchObject({ isError: false, value: { echoed: 'served' } });
      // Well under the worker backstop (timeoutMs + 1 s): nobody waited on a frozen worker.
      expect(performance.now() - started).toBeLessThan(1000);
    });

    it.each([
      ['promise-constructor.js', 'attack', { isError: true, error: { code: 'TOOL_ERROR' } }],
      ['throwing-tojson.js', 'attack', { isError: true, error: { code: 'TOOL_ERROR' } }],
      ['throwing-tojson.js', 'attack_primitive', { isError: false, value: 1 }],
      ['stray-rejection.js', 'attack', { isError: false, value: 1 }],
    ])('%s (%s): the plugin\'s own fault, never SANDBOX_CRASH, and the sandbox process is not retired', async (fixture, tool, expected) => {
      const setup = await open([{ fixture: `hostile/${fixture}` }], { mode });
      expect(await setup.call('benign', 'victim', 'warm-up', { text: 'x' })).toMatchObject({ isError: false });
      const processes = sandboxProcessIds(setup.sandbox);
      expect(await setup.call(tool, 'attacker')).toMatchObject(expected);
      expect(await setup.call('benign', 'victim', 'victim-1', { text: 'next' })).toMatchObject({ isError: false, value: { echoed: 'next' } });
      expect(sandboxProcessIds(setup.sandbox)).toEqual(processes);
    });
  });
}

describe('the bridge and the verdicts', () => {
  it('finalization-spin.js: FinalizationRegistry, whose callbacks run outside any call, is not in the realm', async () => {
    const setup = await open([{ fixture: 'hostile/finalization-spin.js' }]);
    expect(await setup.call('attack', 'attacker')).toMatchObject({ isError: false, value: 'no FinalizationRegistry' });
    expect(await setup.call('benign', 'victim', 'victim-1', { text: 'ok' })).toMatchObject({ isError: false });
  });

  it('option-pollution.js: options planted on Object.prototype change nothing; a capability answer is plain JSON', async () => {
    const setup = await open([{ fixture: 'hostile/option-pollution.js', manifest: { capabilities: ['echo'] } }], {}, { echo: (argument) => argument });
    expect(await setup.call('attack', 'attacker')).toMatchObject({ isError: false, value: { answer: { text: 'plain' }, kind: 'object', plainObject: true, methods: [] } });
    expect(await setup.call('benign', 'victim', 'victim-1', { text: 'ok' })).toMatchObject({ isError: false });
  });

  it('huge-string-output.js: a 30 MiB result is OUTPUT_TOO_LARGE before it is copied, and the process lives', async () => {
    const setup = await open([{ fixture: 'hostile/huge-string-output.js', manifest: { limits: { memoryMb: 64, timeoutMs: 5000, cpuMs: 2000 } } }], { threads: 2 });
    expect(await setup.call('benign', 'victim', 'warm-up', { text: 'x' })).toMatchObject({ isError: false });
    const processes = sandboxProcessIds(setup.sandbox);
    const [attack, beside] = await Promise.all([setup.call('attack', 'attacker'), setup.call('benign', 'victim', 'victim-1', { text: 'beside' })]);
    expect(code(attack!)).toBe('OUTPUT_TOO_LARGE');
    expect(beside).toMatchObject({ isError: false, value: { echoed: 'beside' } });
    expect(sandboxProcessIds(setup.sandbox)).toEqual(processes);
  });

  // The heap must reach its ceiling well inside the budget whatever the machine's load, so the
  // limit is small and the clocks generous (the CPU allowance too: it counts a running task's
  // wait for a core, and with the harness's 200 ms a loaded CI run once answered CPU_LIMIT);
  // the verdict must then not be the clock's.
  // (array-fill.js under a 32 MiB heap makes V8 abort the whole process, a crash only the process boundary contains.
  // Array.prototype.fill ignores termination, so at its deadline the heap cannot be read and the
  // process's growth is the witness: 3 s, CPU allowance as long, lets it grow that far on a
  // loaded machine, where 1 s once did not and the verdict was TIMEOUT.)
  it.each([
    ['object-growth.js', { memoryMb: 32, timeoutMs: 1500, cpuMs: 1500 }],
    ['array-fill.js', { memoryMb: 64, timeoutMs: 3000, cpuMs: 3000 }],
  ])('%s: a heap filled to its ceiling is MEMORY_LIMIT, not TIMEOUT or CPU_LIMIT', async (fixture, limits) => {
    const setup = await open([{ fixture: `hostile/${fixture}`, manifest: { limits } }]);
    const verdict = code(await setup.call('attack', 'attacker'));
    // Array.prototype.fill ignores termination: stopping it can make V8 abort the whole
    // sandbox process instead (contained: SANDBOX_CRASH, and the next call is served).
    if (fixture === 'array-fill.js') expect(['MEMORY_LIMIT', 'SANDBOX_CRASH']).toContain(verdict);
    else expect(verdict).toBe('MEMORY_LIMIT');
    expect(await setup.call('benign', 'victim', 'victim-1', { text: 'ok' })).toMatchObject({ isError: false });
  });

  it('forged-verdict.js: a toJSON on Object.prototype shapes only the value; a thrown look-alike is TOOL_ERROR', async () => {
    const setup = await open([{ fixture: 'hostile/forged-verdict.js' }]);
    expect(await setup.call('attack', 'attacker')).toMatchObject({ isError: false, value: { ok: false, code: 'OUTPUT_TOO_LARGE' } });
    expect(code(await setup.call('attack_thrown', 'attacker'))).toBe('TOOL_ERROR');
    expect(await setup.call('benign', 'victim', 'victim-1', { text: 'ok' })).toMatchObject({ isError: false });
  });

  it('capability-error-detail.js: a failed capability is a generic coded error built in the realm, with no host frames or paths', async () => {
    const setup = await open([{ fixture: 'hostile/capability-error-detail.js', manifest: { capabilities: ['fail'] } }], {}, {
      fail: () => {
        throw new Error('ENOENT: /srv/secret/store.db');
      },
    });
    const result = await setup.call('attack', 'attacker');
    expect(result).toMatchObject({ isError: false, value: { message: 'capability fail failed', code: 'FAILED' } });
    const text = JSON.stringify(result);
    for (const hostDetail of ['/srv/secret', 'ENOENT', 'node_modules', 'isolated-vm', 'file://', '.ts:', 'packages/sandbox', 'node:internal']) expect(text).not.toContain(hostDetail);
  });

  it('prototype-tool-names.js: tools named like Object.prototype keys load, get their own permissions, and run', async () => {
    const setup = await open([{ fixture: 'hostile/prototype-tool-names.js', manifest: { permissions: { default: 'allow', tools: { benign: 'deny' } } } }]);
    for (const name of ['constructor', 'toString', 'hasOwnProperty', 'valueOf']) {
      expect(await setup.call(name, 'attacker')).toMatchObject({ isError: false, value: name });
    }
    expect(code(await setup.call('benign', 'attacker'))).toBe('PERMISSION_DENIED');
  });
});

describe('the worker backstop', () => {
  it.each(['process', 'in-process'] as const)('a worker that stops answering is replaced, its call answered TIMEOUT, and the next call served (%s mode)', async (mode) => {
    const setup = await open([{ fixture: 'hostile/stray-rejection.js', manifest: { limits: { memoryMb: 16, timeoutMs: 300, cpuMs: 200 } } }], {
      mode,
      faults: ({ callId }) => (callId === 'hang-1' ? 'hang-worker' : undefined),
    });
    expect(await setup.call('benign', 'victim', 'warm-up', { text: 'x' })).toMatchObject({ isError: false });
    const processes = sandboxProcessIds(setup.sandbox);
    const result = await setup.call('benign', 'attacker', 'hang-1', { text: 'x' });
    expect(code(result)).toBe('TIMEOUT');
    expect((result as ToolFailure).error.message).toContain('stopped answering');
    expect(await setup.call('benign', 'victim', 'after', { text: 'served' })).toMatchObject({ isError: false, value: { echoed: 'served' } });
    // A process that holds a stuck thread takes no new calls: the next one ran in a fresh child.
    if (mode === 'process') expect(sandboxProcessIds(setup.sandbox)).not.toEqual(processes);
  });
});

describe('found by the outside review', () => {
  it('capability-flood.js: one call holds at most 4 MiB of requests at the embedder at once; the rest are refused at once', async () => {
    let inFlight = 0;
    let most = 0;
    const setup = await open([{ fixture: 'hostile/capability-flood.js', manifest: { capabilities: ['slow'], limits: { memoryMb: 64, timeoutMs: 10_000, cpuMs: 5000 } } }], {}, {
      slow: async () => {
        inFlight += 1;
        most = Math.max(most, inFlight);
        await new Promise((resolve) => setImmediate(resolve));
        inFlight -= 1;
        return 'ok';
      },
    });
    const result = await setup.call('attack', 'attacker');
    // '€' x 300,000 is 0.9 MB of UTF-8 as JSON: at most four fit in the 4 MiB a call may have in flight.
    expect(most).toBeLessThanOrEqual(4);
    if (result.isError) throw new Error(JSON.stringify(result.error));
    const counts = (result as { value: Record<string, number> }).value;
    expect((counts.answered ?? 0) + (counts.TOO_MANY_REQUESTS ?? 0)).toBe(100);
    expect(counts.TOO_MANY_REQUESTS).toBeGreaterThan(0);
  });

  it('huge-capability-argument.js: a 60 MiB argument is refused TOO_LARGE in the realm, before it is copied; the process lives', async () => {
    const setup = await open([{ fixture: 'hostile/huge-capability-argument.js', manifest: { capabilities: KV, limits: { memoryMb: 128, timeoutMs: 10_000, cpuMs: 5000 } } }]);
    const before = sandboxProcessIds(setup.sandbox);
    const result = await setup.call('attack', 'attacker');
    expect(result).toMatchObject({ isError: false, value: ['TOO_LARGE', 'TOO_LARGE'] });
    expect(setup.seen).toEqual([]);
    expect(sandboxProcessIds(setup.sandbox)).toEqual(before);
    expect(await setup.call('benign', 'victim', undefined, { text: 'after' })).toMatchObject({ isError: false, value: { echoed: 'after' } });
  });

  it('iterator-forged-capability-argument.js: a replaced array iterator cannot forge what the realm sends the host', async () => {
    const setup = await open([{ fixture: 'hostile/iterator-forged-capability-argument.js', manifest: { capabilities: KV, limits: { memoryMb: 64, timeoutMs: 5000, cpuMs: 2000 } } }]);
    // The argument the plugin passed is the one the host gets: not the 3 MiB text the iterator offered.
    expect(await setup.call('attack', 'attacker')).toMatchObject({ isError: false, value: true });
    expect(setup.seen.map((entry) => entry.from)).toEqual(['real']);
    expect(setup.stores.get('attacker')?.get('k')).toBe('small');
  });

  it('top-level-wedge.js: a top level whose thrown message spins is stopped within its budget and the plugin does not load', async () => {
    const sandbox = createSandbox({ threads: 1 });
    sandboxes.push(sandbox);
    const dir = await pluginFolder('hostile/top-level-wedge.js', { limits: { memoryMb: 16, timeoutMs: 1000, cpuMs: 100 } });
    dirs.push(dir);
    const started = performance.now();
    const [report] = await sandbox.checkPlugins([dir]);
    expect(performance.now() - started).toBeLessThan(2500); // the describe budget (200 ms CPU, 1 s) plus the process start
    expect(report!.problems.join('\n')).toMatch(/CPU|time|limit/i);
  });

  it('forged-top-level-verdict.js: a top level that throws "timed out" is its own load failure, not CPU_LIMIT', async () => {
    const sandbox = createSandbox({ threads: 1 });
    sandboxes.push(sandbox);
    const dir = await pluginFolder('hostile/forged-top-level-verdict.js', { limits: { memoryMb: 16, timeoutMs: 2000, cpuMs: 1000 } });
    dirs.push(dir);
    const [report] = await sandbox.checkPlugins([dir]);
    const problems = report!.problems.join('\n');
    expect(problems).toContain('(forged)');
    expect(problems).not.toContain('CPU_LIMIT');
  });

  it('classifier-stray-rejection.js: a classifier that leaves a rejection behind only makes its call exclusive; the process stays', async () => {
    const setup = await open([{ fixture: 'hostile/classifier-stray-rejection.js' }], { threads: 2 });
    expect(await setup.call('benign', 'victim', 'warm-up', { text: 'x' })).toMatchObject({ isError: false });
    const processes = sandboxProcessIds(setup.sandbox);
    for (let turn = 0; turn < 3; turn += 1) {
      const results = await setup.engine.run([
        { id: `a-${turn}`, name: 'attack', arguments: '{}' },
        { id: `b-${turn}`, name: 'attack', arguments: '{}' },
      ], { tenant: 'attacker' });
      expect(results.map((result) => result.isError)).toEqual([false, false]);
    }
    expect(sandboxProcessIds(setup.sandbox)).toEqual(processes);
  });

  it('rope-output.js: a rope returned or logged is judged by its length, never flattened by the realm', async () => {
    const setup = await open([{ fixture: 'hostile/rope-output.js', manifest: { limits: { memoryMb: 64, timeoutMs: 5000, cpuMs: 3000 } } }]);
    // Flattened, 512 MiB would land in one allocation past the 64 MiB limit: MEMORY_LIMIT.
    expect(code(await setup.call('returned', 'attacker'))).toBe('OUTPUT_TOO_LARGE');
    const logged = await setup.call('logged', 'attacker');
    expect(logged).toMatchObject({ isError: false, value: 'logged' });
    expect(JSON.stringify(logged.metadata?.logs)).toContain(`(a string of ${2 ** 28 * 1.5} characters, not shown)`);
  });

  it.each(['fresh', 'warm'])('rope-flatten.js (%s realm): a string flattened past the heap limit is MEMORY_LIMIT, and nothing of it stays', async (realm) => {
    const setup = await open([{ fixture: 'hostile/rope-flatten.js', manifest: { realm, limits: { memoryMb: 8, timeoutMs: 5000, cpuMs: 3000 } } }]);
    expect(code(await setup.call('attack', 'attacker'))).toBe('MEMORY_LIMIT');
    expect(await setup.call('benign', 'attacker', 'after', { text: 'ok' })).toMatchObject({ isError: false });
  });
});
