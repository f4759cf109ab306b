// An engine as an embedder wires Code Mode: a sandboxed plugin and instrumented trusted
// tools behind one policy (with a deny, an argument rule and an ask), and the code tool in
// an engine of its own. The trusted tools record what ran, how many at once, and whether
// their call was cancelled, so tests can see every sub-call from the host's side.
import { createEngine, defineTool, type Approver, type Engine, type Guard, type ToolResult } from '@airlock/core';
import { createCodeMode, createSandbox, type CodeMode, type Sandbox } from '@airlock/sandbox';
import type { CodeModeLimits } from '@airlock/core';
import { rm } from 'node:fs/promises';
import { pluginFolder } from './plugin-harness.js';

export interface CodeModeHarness {
  readonly sandbox: Sandbox;
  readonly engine: Engine;
  readonly codeMode: CodeMode;
  /** What the trusted tools saw. */
  readonly seen: { calls: { name: string; tenant: string | undefined }[]; running: number; maxRunning: number; exclusiveOverlap: boolean; aborted: number; finishedAfterAbort: number; secretRuns: number };
  run(code: string, options?: { tenant?: string; signal?: AbortSignal; approver?: Approver }): Promise<ToolResult>;
  close(): Promise<void>;
}

export async function codeModeHarness(options: { limits?: Partial<CodeModeLimits>; guards?: Guard[] } = {}): Promise<CodeModeHarness> {
  const dir = await pluginFolder('code-mode/inventory.js', { limits: { memoryMb: 16, timeoutMs: 2000, cpuMs: 200 } });
  const sandbox = createSandbox({ threads: 2, processes: 1 });
  await sandbox.loadPlugins([dir]);
  const seen: CodeModeHarness['seen'] = { calls: [], running: 0, maxRunning: 0, exclusiveOverlap: false, aborted: 0, finishedAfterAbort: 0, secretRuns: 0 };
  let exclusiveRunning = false;
  const enter = (name: string, tenant: string | undefined, exclusive: boolean): void => {
    seen.calls.push({ name, tenant });
    if (exclusive && seen.running > 0) seen.exclusiveOverlap = true;
    if (!exclusive && exclusiveRunning) seen.exclusiveOverlap = true;
    if (exclusive) exclusiveRunning = true;
    seen.running += 1;
    seen.maxRunning = Math.max(seen.maxRunning, seen.running);
  };
  const leave = (exclusive: boolean): void => {
    seen.running -= 1;
    if (exclusive) exclusiveRunning = false;
  };
  /** Resolves after `ms`; rejects at once when the call is cancelled (counted), as a tool that honours its signal stops. */
  const wait = (ms: number, signal: AbortSignal): Promise<void> => new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      if (signal.aborted) seen.finishedAfterAbort += 1;
      resolve();
    }, ms);
    signal.addEventListener('abort', () => {
      seen.aborted += 1;
      clearTimeout(timer);
      reject(new Error('cancelled'));
    }, { once: true });
  });
  const tools = [
    defineTool({
      name: 'lookup_price',
      description: 'The unit price of an item, in cents.',
      parameters: { type: 'object', properties: { item: { type: 'string' } }, required: ['item'], additionalProperties: false },
      output: { type: 'object', properties: { cents: { type: 'integer' } }, required: ['cents'] },
      isConcurrencySafe: () => true,
      execute: async ({ item }, exec) => {
        enter('lookup_price', exec.tenant, false);
        try {
          await wait(30, exec.signal);
          return { cents: String(item).length * 25 };
        } finally {
          leave(false);
        }
      },
    }),
    defineTool({
      name: 'record_order',
      description: 'Record an order (not concurrency-safe: runs alone).',
      parameters: { type: 'object', properties: { item: { type: 'string' }, count: { type: 'integer', minimum: 1 } }, required: ['item', 'count'], additionalProperties: false },
      execute: async ({ item, count }, exec) => {
        enter('record_order', exec.tenant, true);
        try {
          await wait(20, exec.signal);
          return { recorded: `${String(count)} x ${String(item)}`, tenant: exec.tenant ?? null };
        } finally {
          leave(true);
        }
      },
    }),
    defineTool({
      name: 'slow',
      description: 'Takes 5 seconds unless cancelled.',
      parameters: { type: 'object', properties: {} },
      isConcurrencySafe: () => true,
      execute: async (_args, exec) => {
        enter('slow', exec.tenant, false);
        try {
          await wait(5000, exec.signal);
          return 'slow done';
        } finally {
          leave(false);
        }
      },
    }),
    defineTool({
      name: 'read_file',
      description: 'Read a file (denied under /etc by policy).',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      execute: ({ path }) => {
        seen.secretRuns += 1;
        return `contents of ${String(path)}`;
      },
    }),
    defineTool({
      name: 'drop_database',
      description: 'Denied outright by policy: never offered to a program.',
      parameters: { type: 'object', properties: {} },
      execute: () => {
        seen.secretRuns += 1;
        return 'dropped';
      },
    }),
    defineTool({
      name: 'send_email',
      description: 'Needs approval.',
      parameters: { type: 'object', properties: { to: { type: 'string' } }, required: ['to'] },
      execute: ({ to }) => ({ sent: to ?? null }),
    }),
  ];
  let approver: Approver | undefined;
  const engine = createEngine({
    sources: [sandbox],
    tools,
    policy: {
      default: 'allow',
      rules: [
        { tool: 'drop_database', decision: 'deny', reason: 'never from a model' },
        { tool: 'read_file', when: { path: '/etc/**' }, decision: 'deny', reason: 'system files are off limits' },
        { tool: 'send_email', decision: 'ask' },
      ],
    },
    // No approver for this run: asking fails, as a person who cannot be reached would.
    approver: (request, signal) => {
      if (approver === undefined) throw new Error('nobody to ask');
      return approver(request, signal);
    },
    ...(options.guards === undefined ? {} : { guards: options.guards }),
  });
  const codeMode = createCodeMode({ engine, sandbox, limits: { cpuMs: 300, memoryMb: 16, timeoutMs: 8000, maxCalls: 20, maxCallsInFlight: 4, ...options.limits } });
  const outers = new Map<string, Engine>();
  const outerFor = (tenant: string): Engine => {
    let outer = outers.get(tenant);
    if (outer === undefined) {
      outer = createEngine({ tools: [codeMode.tool({ tenant })], policy: { default: 'allow' } });
      outers.set(tenant, outer);
    }
    return outer;
  };
  let counter = 0;
  return {
    sandbox,
    engine,
    codeMode,
    seen,
    async run(code, runOptions = {}) {
      approver = runOptions.approver;
      const tenant = runOptions.tenant ?? 'alice';
      counter += 1;
      const [result] = await outerFor(tenant).run([{ id: `program-${counter}`, name: 'run_code', arguments: { code } }], { tenant, ...(runOptions.signal === undefined ? {} : { signal: runOptions.signal }) });
      return result!;
    },
    async close() {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
