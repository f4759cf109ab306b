// What a sandboxed call leaves on the host once it is answered: nothing. A plugin granted
// capabilities gets a signal per call that ends with the call; it once followed the call's
// signal through AbortSignal.any, which on Node 20 leaves a dependant on the source for good,
// and with no caller signal the source is the pipeline's one never-aborted signal, so every
// call kept some of the host's heap for good (an outside attacker measured 27 MiB after
// 400,000 calls; this test, 315 MiB after 100,000).
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { createEngine } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import type { Admission } from '../src/admission/admission.js';
import type { SandboxHost } from '../src/host/sandbox-host.js';
import type { LoadedPlugin } from '../src/plugin/loaded-plugin.js';
import { pluginTools } from '../src/plugin/plugin-tools.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

/** A host that answers every call at once: only the host-side path of a call is exercised. */
const host = { run: async () => ({ ok: true, json: 'null', usage: { cpuMs: 0, wallMs: 0, bytesIn: 0, bytesOut: 0 } }) } as unknown as SandboxHost;
const plugin = {
  name: 'granted',
  dir: '.',
  manifest: { name: 'granted', module: './index.js' },
  spec: { capabilities: ['log'], limits: { maxOutputBytes: 1024 } },
  tools: [{ name: 'noop', description: 'Does nothing.', parameters: { type: 'object' }, hasClassifier: false }],
} as unknown as LoadedPlugin;
const admission = { acquire: async () => ({ placement: 0, release: () => undefined }) } as unknown as Admission;

function heapMiB(): number {
  for (let i = 0; i < 4; i += 1) collectGarbage();
  return process.memoryUsage().heapUsed / 1024 / 1024;
}

describe('a capability-granted plugin\'s calls, answered', () => {
  it('leave nothing on the host\'s heap: 100,000 calls with no caller signal', async () => {
    const tools = pluginTools(plugin, host, new WeakMap(), { admission, refusal: () => undefined, capabilities: new Map(), faultFor: undefined });
    const engine = createEngine({ tools, policy: { default: 'allow' } });
    const turn = Array.from({ length: 4 }, (_, index) => ({ id: `c${index}`, name: 'noop', arguments: '{}' }));
    for (let i = 0; i < 1000; i += 1) await engine.run(turn); // warm: code and caches settle
    const before = heapMiB();
    for (let i = 0; i < 25_000; i += 1) await engine.run(turn);
    // 315 MiB when each call left its dependant (and what it holds) behind, measured here.
    expect(heapMiB() - before).toBeLessThan(3);
  });
});
