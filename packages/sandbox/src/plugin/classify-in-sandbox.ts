// The engine's preSchedule hook for plugins: asks each plugin's classifiers, inside its
// isolate, which of this turn's calls are concurrency-safe. The verdicts are what a plugin
// tool's synchronous isConcurrencySafe reads; no verdict means exclusive.
import type { ParsedCall, PreSchedule } from '@airlock/core';
import type { SandboxHost } from '../host/sandbox-host.js';
import type { Admission, Grant } from '../admission/admission.js';
import { callsWorthClassifying } from './calls-worth-classifying.js';
import { DEFAULT_TENANT } from './default-tenant.js';
import type { LoadedPlugin } from './loaded-plugin.js';

/** Verdicts of plugin classifiers for this turn, keyed by the frozen args object of each call. */
export type Verdicts = WeakMap<object, boolean>;

/**
 * Asks each plugin's classifiers, inside its isolate, about this turn's calls whose verdict
 * can matter (never a lone call's), one task per plugin; admitted like calls, so they take
 * their fair share of threads too.
 */
export function classifyInSandbox(plugins: readonly LoadedPlugin[], host: SandboxHost, verdicts: Verdicts, admission: Admission): PreSchedule {
  const owners = new Map<string, LoadedPlugin>();
  for (const plugin of plugins) for (const tool of plugin.tools) if (tool.hasClassifier) owners.set(tool.name, plugin);
  return async (calls: readonly ParsedCall[], turn) => {
    const byPlugin = new Map<LoadedPlugin, ParsedCall[]>();
    for (const call of callsWorthClassifying(calls, (candidate) => owners.has(candidate.name))) {
      const owner = owners.get(call.name) as LoadedPlugin;
      const owned = byPlugin.get(owner);
      if (owned === undefined) byPlugin.set(owner, [call]);
      else owned.push(call);
    }
    await Promise.all([...byPlugin].map(async ([plugin, pluginCalls]) => {
      const tenant = turn.tenant ?? DEFAULT_TENANT;
      let grant: Grant;
      try {
        grant = await admission.acquire(tenant, plugin.name, turn.signal);
      } catch {
        return; // cancelled while queued: no verdict, and the calls will not dispatch either
      }
      let outcome;
      try {
        outcome = await host.run(
          { kind: 'classify', plugin: plugin.spec, tenant, calls: pluginCalls.map((call) => ({ tool: call.name, argsJson: JSON.stringify(call.args) })) },
          turn.signal,
          undefined,
          grant.placement,
        );
      } finally {
        grant.release();
      }
      if (!outcome.ok) return; // no verdict: exclusive
      const answers: unknown = JSON.parse(outcome.json);
      if (!Array.isArray(answers)) return;
      pluginCalls.forEach((call, index) => verdicts.set(call.args as object, answers[index] === true));
    }));
  };
}
