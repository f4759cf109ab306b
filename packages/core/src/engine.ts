// createEngine: the registry, the policy and the pipeline options in one place,
// checked by path, with the scheduler and provider formats behind two calls.
import { AirlockError } from './errors/airlock-error.js';
import type { JsonObject } from './json/json-types.js';
import { createPolicy, type PermissionPolicy, type PolicyConfig } from './permission/permission-policy.js';
import { DEFAULT_LIMITS, type Approver, type ExecuteWrapper, type Guard, type PipelineLimits, type PipelineObservers } from './pipeline/pipeline-config.js';
import { presentCall, presentResult } from './present/generic-cards.js';
import type { ProviderId, ToolCallRequest } from './providers/provider-format.js';
import { mcpToolsWithOutput } from './providers/mcp.js';
import { PROVIDERS, type ProviderTool, type ProviderToolMessage } from './providers/providers.js';
import { ToolRegistry } from './registry/tool-registry.js';
import type { ToolResult } from './result/tool-result.js';
import { runTurn, type SchedulerConfig, type TurnOptions } from './scheduler/run-turn.js';
import type { ToolSchema } from './tool/schema-of.js';
import type { AnyTool, Card } from './tool/tool-definition.js';

export interface EngineOptions {
  readonly tools?: Iterable<AnyTool>;
  readonly registry?: ToolRegistry;
  /** Required: who may run what. `{ default: 'allow' }` states it for trusted tools. */
  readonly policy: PolicyConfig | PermissionPolicy;
  readonly approver?: Approver;
  readonly guards?: readonly Guard[];
  readonly executeWrappers?: readonly ExecuteWrapper[];
  readonly observers?: PipelineObservers;
  readonly limits?: Partial<PipelineLimits>;
  /** Most calls of one parallel group running at once. Default 10. */
  readonly maxParallel?: number;
  readonly preSchedule?: SchedulerConfig['preSchedule'];
}

export interface Engine {
  readonly registry: ToolRegistry;
  schemas(): ToolSchema[];
  /**
   * The model-facing tool list in one provider's format, typed as that provider's SDK expects
   * (`engine.tools('anthropic')` is `AnthropicTool[]`); MCP entries carry `outputSchema` where declared.
   */
  tools<P extends ProviderId>(provider: P): ProviderTool<P>[];
  run(calls: readonly ToolCallRequest[], options?: TurnOptions): Promise<ToolResult[]>;
  /** Runs one provider message's tool calls and marshals the results back into that format. */
  runMessage<P extends ProviderId>(provider: P, message: unknown, options?: TurnOptions): Promise<{ results: ToolResult[]; messages: ProviderToolMessage<P>[] }>;
  presentCall(name: string, args: JsonObject | undefined): Card;
  presentResult(args: JsonObject | undefined, result: ToolResult): Card;
}

function positive(path: string, value: unknown, integer: boolean): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new AirlockError('INVALID_OPTION', `${path} must be a positive ${integer ? 'integer' : 'number'}`, { path });
  }
}

function isPolicy(value: unknown): value is PermissionPolicy {
  return typeof value === 'object' && value !== null && typeof (value as PermissionPolicy).decide === 'function';
}

export function createEngine(options: EngineOptions): Engine {
  if (typeof options !== 'object' || options === null) throw new AirlockError('INVALID_OPTION', 'options must be an object', { path: 'options' });
  if (options.policy === undefined) throw new AirlockError('INVALID_OPTION', 'options.policy is required (e.g. { default: "allow" })', { path: 'options.policy' });
  const maxParallel = options.maxParallel ?? 10;
  positive('options.maxParallel', maxParallel, true);
  const limits: PipelineLimits = { ...DEFAULT_LIMITS, ...options.limits };
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof PipelineLimits)[]) positive(`options.limits.${key}`, limits[key], key !== 'approvalTimeoutMs');
  if (options.approver !== undefined && typeof options.approver !== 'function') throw new AirlockError('INVALID_OPTION', 'options.approver must be a function', { path: 'options.approver' });

  const registry = options.registry ?? new ToolRegistry();
  for (const tool of options.tools ?? []) registry.register(tool);
  const config: SchedulerConfig = {
    registry,
    policy: isPolicy(options.policy) ? options.policy : createPolicy(options.policy),
    approver: options.approver,
    guards: [...(options.guards ?? [])],
    executeWrappers: [...(options.executeWrappers ?? [])],
    observers: { ...options.observers },
    limits,
    maxParallel,
    preSchedule: options.preSchedule,
  };

  const run = (calls: readonly ToolCallRequest[], turn?: TurnOptions): Promise<ToolResult[]> => runTurn(config, calls, turn);
  return {
    registry,
    schemas: () => registry.schemas(),
    // Each provider's format returns its own types; the casts restate what PROVIDERS[provider] holds.
    tools: <P extends ProviderId>(provider: P) =>
      (provider === 'mcp'
        ? mcpToolsWithOutput(registry.schemas().map((schema) => ({ schema, output: registry.get(schema.name)?.definition.output })))
        : PROVIDERS[provider].tools(registry.schemas())) as ProviderTool<P>[],
    run,
    async runMessage<P extends ProviderId>(provider: P, message: unknown, turn?: TurnOptions) {
      const format = PROVIDERS[provider];
      const results = await run(format.parseCalls(message), turn);
      return { results, messages: format.toolMessages(results) as ProviderToolMessage<P>[] };
    },
    presentCall: (name, args) => presentCall(registry.get(name), name, args),
    presentResult: (args, result) => presentResult(registry.get(result.name), args, result),
  };
}

