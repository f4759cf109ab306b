// A plugin classifier runs only when its verdict can change the schedule: a turn of one
// call never asks it (one call runs alone either way); a turn of two still does, once.
// The fixture counts classifier runs in a warm realm on a single worker thread, so the
// calls themselves report how often the classifier ran for their tenant.
import { createEngine, type Engine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createSandbox, type Sandbox } from '@airlock/sandbox';
import { rm } from 'node:fs/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';

let sandbox: Sandbox;
let engine: Engine;
let dir: string;

beforeAll(async () => {
  dir = await pluginFolder('plugins/classify-counter.js', { name: 'counter', realm: 'warm' });
  // One worker thread, no reserve: classify and call tasks share the tenant's warm realm.
  sandbox = createSandbox({ threads: 1, processes: 1, fairShare: { reserveThreads: 0 } });
  await sandbox.loadPlugins([dir]);
  engine = createEngine({ tools: sandbox.tools(), policy: { default: 'allow' }, preSchedule: sandbox.preSchedule });
});

afterAll(async () => {
  await sandbox.close();
  await rm(dir, { recursive: true, force: true });
});

const counted = (id: string, args: unknown = { parallel: true }): ToolCallRequest => ({ id, name: 'counted', arguments: JSON.stringify(args) });
const classifiedSeen = (results: readonly ToolResult[]): (number | string)[] =>
  results.map((result) => (result.isError ? result.error.code : (result as unknown as { value: { classified: number } }).value.classified));

describe('classification never costs a lone call a round trip', () => {
  it('a turn of one call does not run the classifier, however often it comes', async () => {
    for (let i = 0; i < 3; i += 1) expect(classifiedSeen(await engine.run([counted(`one-${i}`)], { tenant: 'lone' }))).toEqual([0]);
  });

  it('a turn of one call beside calls that failed parsing does not run it either', async () => {
    const results = await engine.run([counted('bad', { parallel: 'no' }), counted('good'), { id: 'ghost', name: 'nope', arguments: '{}' }], { tenant: 'mixed' });
    expect(classifiedSeen(results)).toEqual(['INVALID_ARGS', 0, 'UNKNOWN_TOOL']);
  });

  it('a turn of two calls asks the classifier once for both, before either runs', async () => {
    const results = await engine.run([counted('a'), counted('b', { parallel: false })], { tenant: 'pair' });
    expect(classifiedSeen(results)).toEqual([2, 2]);
    // And the next lone call of that tenant still skips it.
    expect(classifiedSeen(await engine.run([counted('c')], { tenant: 'pair' }))).toEqual([2]);
  });
});
