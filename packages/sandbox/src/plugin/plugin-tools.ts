// Turns a loaded plugin into core tool definitions: model-facing fields from the
// module, host-only fields from the manifest and the host. The body runs only in
// the sandbox; the core pipeline (gate, guards, deadline, validation) stays in front.
import { ToolCallError, defineTool, linkAbortSignal, type AnyTool, type JsonObject, type JsonValue } from '@airlock/core';
import type { SandboxHost } from '../host/sandbox-host.js';
import type { Fault } from '../worker/worker-protocol.js';
import type { Admission, Grant } from '../admission/admission.js';
import { capabilityHandler, type Capability, type CapabilityContext, type CapabilityCounts } from './capability-handler.js';
import type { Verdicts } from './classify-in-sandbox.js';
import { DEFAULT_TENANT } from './default-tenant.js';
import type { LoadedPlugin } from './loaded-plugin.js';

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
        // It follows the call's signal and is detached when the call ends: AbortSignal.any would
        // leave a dependant on a signal that outlives the call (the pipeline's shared
        // never-aborted one, a caller's) for good, and what it holds.
        const scope = plugin.spec.capabilities.length > 0 ? linkAbortSignal(exec.signal) : undefined;
        const context: CapabilityContext | undefined = scope === undefined ? undefined : { tenant, plugin: plugin.name, tool: descriptor.name, callId: exec.callId, signal: scope.signal };
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
          scope?.abort(undefined);
          scope?.dispose();
          grant.release();
        }
        // The plugin's console and its log capability: one per-call log, in the order the plugin
        // wrote it, for the operator (never for the model).
        const logs = outcome.logs;
        // The worker counts every request (refused ones too); the host, those that reached it.
        const requests = Math.max(outcome.capabilityRequests ?? 0, counts.requests);
        exec.setMetadata({
          cpuMs: outcome.usage.cpuMs, wallMs: outcome.usage.wallMs, bytesIn: outcome.usage.bytesIn, bytesOut: outcome.usage.bytesOut, plugin: plugin.name,
          ...(requests === 0 ? {} : { capabilityRequests: requests, capabilityBytesIn: counts.bytesIn, capabilityBytesOut: counts.bytesOut }),
          // The --json report and stderr show it.
          ...(logs === undefined ? {} : { logs: logs.lines.map((line) => ({ level: line.level, message: line.message })), ...(logs.dropped > 0 ? { logsDropped: logs.dropped } : {}) }),
        });
        if (!outcome.ok) throw new ToolCallError(outcome.code, `${descriptor.name}: ${outcome.message}`);
        try {
          return JSON.parse(outcome.json) as JsonValue;
        } catch {
          // Only a sandbox that lost control of its realm's JSON.stringify could send this.
          throw new ToolCallError('INVALID_TOOL_OUTPUT', `${descriptor.name}: the sandbox returned malformed JSON`);
        }
      },
    }),
  );
}
