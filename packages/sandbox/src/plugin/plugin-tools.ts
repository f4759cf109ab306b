// Turns a loaded plugin into core tool definitions: model-facing fields from the
// module, host-only fields from the manifest and the host. The body runs only in
// the sandbox; the core pipeline (gate, guards, deadline, validation) stays in front.
import { ToolCallError, defineTool, snapshotJson, toolNameMatcher, type AnyTool, type JsonObject, type JsonValue, type ParsedCall, type PolicyRule, type PreSchedule } from '@airlock/core';
import type { SandboxHost } from '../host/sandbox-host.js';
import type { CapabilityHandler, Fault } from '../worker/worker-protocol.js';
import type { Admission, Grant } from '../admission/admission.js';
import { callsWorthClassifying } from './calls-worth-classifying.js';
import type { LoadedPlugin } from './loaded-plugin.js';
import { attachCallLog, mergeCallLogs } from '../capabilities/log.js';

export const DEFAULT_TENANT = 'default';

/** Verdicts of plugin classifiers for this turn, keyed by the frozen args object of each call. */
export type Verdicts = WeakMap<object, boolean>;

/** What a capability knows about the call that asked: enough to scope by tenant, never host objects. */
export interface CapabilityContext {
  readonly tenant: string;
  readonly plugin: string;
  readonly tool: string;
  readonly callId: string;
  /** Aborts when the call ends (done, killed or cancelled). */
  readonly signal: AbortSignal;
}

/** A host function a manifest may be granted by name: JSON in, JSON out. */
export type Capability = (argument: JsonValue, context: CapabilityContext) => JsonValue | Promise<JsonValue>;

export interface CallHooks {
  readonly admission: Admission;
  /** Why this tenant+plugin's calls are refused now (quarantine), if they are. */
  readonly refusal: (tenant: string, plugin: string) => string | undefined;
  readonly capabilities: ReadonlyMap<string, Capability>;
  /** Testing only: a fault to inject into this call. */
  readonly faultFor: ((call: { readonly callId: string; readonly tool: string; readonly tenant: string }) => Fault | undefined) | undefined;
}

export function pluginTools(plugin: LoadedPlugin, host: SandboxHost, verdicts: Verdicts, hooks: CallHooks): AnyTool[] {
  return plugin.tools.map((descriptor) =>
    defineTool({
      name: descriptor.name,
      description: descriptor.description,
      parameters: descriptor.parameters,
      ...(descriptor.deferLoading === undefined ? {} : { deferLoading: descriptor.deferLoading }),
      ...(descriptor.output === undefined ? {} : { output: descriptor.output }),
      // The manifest's output limit, checked in the isolate, holds in the engine's post-process too.
      maxOutputBytes: plugin.spec.limits.maxOutputBytes,
      // No execute-stage deadline: the sandbox enforces the manifest's timeoutMs itself, from
      // the moment the call starts in its worker. A deadline here would also count time spent
      // queued behind other tenants' calls and blame this call for their load.
      // Only a verdict the isolate gave this very call admits it to a parallel group.
      ...(descriptor.hasClassifier ? { isConcurrencySafe: (args: JsonObject) => verdicts.get(args) === true } : {}),
      execute: async (args: JsonObject, exec): Promise<JsonValue> => {
        const argsJson = JSON.stringify(args);
        const tenant = exec.tenant ?? DEFAULT_TENANT;
        const fault = hooks.faultFor?.({ callId: exec.callId, tool: descriptor.name, tenant });
        // A quarantined pair fails fast, before it queues or reaches a process.
        const refused = hooks.refusal(tenant, plugin.name);
        if (refused !== undefined) throw new ToolCallError('SANDBOX_CRASH', `${descriptor.name}: ${refused}`);
        let grant: Grant;
        try {
          grant = await hooks.admission.acquire(tenant, plugin.name, exec.signal);
        } catch (error) {
          throw ToolCallError.isInstance(error) ? new ToolCallError(error.code, `${descriptor.name}: ${error.message}`) : error;
        }
        // Only calls of a plugin granted capabilities need a scope that ends with the call.
        const scope = plugin.spec.capabilities.length > 0 ? new AbortController() : undefined;
        const context: CapabilityContext | undefined = scope === undefined ? undefined : { tenant, plugin: plugin.name, tool: descriptor.name, callId: exec.callId, signal: AbortSignal.any([exec.signal, scope.signal]) };
        const callLog = context === undefined ? undefined : attachCallLog(context);
        const counts: CapabilityCounts = { requests: 0, bytesIn: 0, bytesOut: 0 };
        const capabilities = context === undefined ? undefined : capabilityHandler(plugin, hooks.capabilities, context, counts);
        let outcome;
        try {
          outcome = await host.run(
            { kind: 'call', plugin: plugin.spec, tenant, tool: descriptor.name, callId: exec.callId, argsJson, ...(fault === undefined ? {} : { fault }) },
            exec.signal,
            capabilities,
            grant.placement,
          );
        } finally {
          scope?.abort();
          grant.release();
        }
        // The plugin's console and its log capability: one per-call log, for the operator (never for the model).
        const logs = mergeCallLogs(outcome.logs, callLog);
        exec.setMetadata({
          cpuMs: outcome.usage.cpuMs, wallMs: outcome.usage.wallMs, bytesIn: outcome.usage.bytesIn, bytesOut: outcome.usage.bytesOut, plugin: plugin.name,
          ...(counts.requests === 0 ? {} : { capabilityRequests: counts.requests, capabilityBytesIn: counts.bytesIn, capabilityBytesOut: counts.bytesOut }),
          // The --json report and stderr show it.
          ...(logs === undefined ? {} : { logs: logs.lines.map((line) => ({ level: line.level, message: line.message })), ...(logs.dropped > 0 ? { logsDropped: logs.dropped } : {}) }),
        });
        if (!outcome.ok) throw new ToolCallError(outcome.code, `${descriptor.name}: ${outcome.message}`);
        return JSON.parse(outcome.json) as JsonValue;
      },
    }),
  );
}

/** One call's capability traffic, for its metadata: requests answered or refused, JSON bytes each way. */
interface CapabilityCounts {
  requests: number;
  bytesIn: number;
  bytesOut: number;
}

/** Answers one call's capability requests from the host's functions: granted names only, JSON only. */
function capabilityHandler(plugin: LoadedPlugin, offered: ReadonlyMap<string, Capability>, context: CapabilityContext, counts: CapabilityCounts): CapabilityHandler {
  const granted = new Set(plugin.spec.capabilities);
  return async (name, json) => {
    counts.requests += 1;
    counts.bytesIn += Buffer.byteLength(json, 'utf8');
    const capability = granted.has(name) ? offered.get(name) : undefined;
    if (capability === undefined) throw new Error(`capability ${name} is not granted`);
    const answer = await capability(JSON.parse(json) as JsonValue, context);
    const text = JSON.stringify(snapshotJson(answer === undefined ? null : answer, { label: `capability ${name}'s answer` }));
    counts.bytesOut += Buffer.byteLength(text, 'utf8');
    return text;
  };
}

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
      byPlugin.set(owner, [...(byPlugin.get(owner) ?? []), call]);
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

/** The manifest's permissions as core policy rules, scoped to this plugin's own tools. */
export function pluginPolicyRules(plugin: LoadedPlugin): PolicyRule[] {
  const permissions = plugin.manifest.permissions;
  const names = plugin.tools.map((tool) => tool.name);
  const rules: PolicyRule[] = names.map((name) => {
    // Own keys only: a tool named "constructor" or "toString" must not read Object.prototype.
    const own = permissions?.tools !== undefined && Object.hasOwn(permissions.tools, name) ? permissions.tools[name] : undefined;
    return {
      tool: name,
      decision: own ?? permissions?.default ?? 'allow',
      reason: `${own !== undefined ? `permissions.tools.${name}` : 'permissions.default'} in the ${plugin.name} plugin's manifest`,
    };
  });
  for (const rule of permissions?.rules ?? []) {
    // A manifest can only speak for its own plugin's tools.
    const matches = toolNameMatcher(rule.tool);
    // One argument on purpose: filter also passes the index, which picomatch would read as an option.
    const scoped = names.filter((name) => matches(name));
    if (scoped.length === 0) continue;
    rules.push({ tool: scoped, decision: rule.decision, ...(rule.when === undefined ? {} : { when: rule.when }), reason: rule.reason ?? `a rule in the ${plugin.name} plugin's manifest` });
  }
  return rules;
}
