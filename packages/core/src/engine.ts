// createEngine: the registry, the policy and the pipeline options in one place,
// checked by path, with the scheduler and provider formats behind two calls.
import { AirlockError } from './errors/airlock-error.js';
import { MAX_TIMER_MS } from './util/max-timer.js';
import { listCopy, plainOptions } from './util/plain-options.js';
import type { JsonObject } from './json/json-types.js';
import { createPolicy, toolNameMatcher, type PermissionPolicy, type PolicyConfig, type PolicyRule } from './permission/permission-policy.js';
import { didYouMean } from './util/did-you-mean.js';
import { messageOf } from './util/sanitize-message.js';
import type { Approver, ExecuteWrapper, Guard, PipelineObservers } from './pipeline/hooks.js';
import { DEFAULT_LIMITS, type PipelineLimits } from './pipeline/pipeline-limits.js';
import { presentCall, presentResult } from './present/generic-cards.js';
import type { ProviderId, ToolCallRequest } from './providers/provider-format.js';
import { mcpCallToolResult, mcpToolsWithOutput } from './providers/mcp.js';
import { sharedOutputSchema } from './tool/shared-output.js';
import { containRejection } from './util/contain-rejection.js';
import { PROVIDERS, type ProviderTool, type ProviderToolMessage } from './providers/providers.js';
import { ToolRegistry } from './registry/tool-registry.js';
import type { ToolResult } from './result/tool-result.js';
import { runTurn, type PreSchedule, type SchedulerConfig, type TurnOptions } from './scheduler/run-turn.js';
import type { ToolSchema } from './tool/schema-of.js';
import type { AnyTool, Card } from './tool/tool-definition.js';

/**
 * Tools that come with their own permissions and scheduling hook, handed over as one: a
 * `Sandbox` from `@airlock/sandbox` is one. The engine registers the tools, joins the rules
 * to its policy and runs the hook, so a source's permissions cannot be left behind.
 */
export interface ToolSource {
  tools(): AnyTool[];
  /** Rules scoped to the source's own tools (a plugin manifest's `permissions`). */
  policyRules(): PolicyRule[];
  readonly preSchedule?: PreSchedule | undefined;
}

export interface EngineOptions {
  /**
   * Tool sources, read once here (load plugins first). Their rules join `policy`: added to
   * its rules when it is a config (the strictest matching rule wins), or decided beside it
   * when it is a `PermissionPolicy` object (the stricter verdict wins).
   */
  readonly sources?: readonly ToolSource[];
  /** Your own (trusted, in-process) tools, from `defineTool`. A name used twice is an error. */
  readonly tools?: Iterable<AnyTool>;
  /** A registry to register into instead of a new one. */
  readonly registry?: ToolRegistry;
  /** Required: who may run what. `{ default: 'allow' }` states it for trusted tools. */
  readonly policy: PolicyConfig | PermissionPolicy;
  /** Answers `ask` decisions; only the literal `true` approves. Without one, `ask` ends as APPROVAL_UNAVAILABLE. */
  readonly approver?: Approver;
  /** Checks after the permission gate that may only deny, never re-allow. */
  readonly guards?: readonly Guard[];
  /** Wrap the execute stage (the only stage that may replace the abort signal). */
  readonly executeWrappers?: readonly ExecuteWrapper[];
  /** Called on each result and stage; a throwing observer costs nothing but its own call. */
  readonly observers?: PipelineObservers;
  /** Argument and output size limits, approval timeout; see DEFAULT_LIMITS. */
  readonly limits?: Partial<PipelineLimits>;
  /** Most calls of one parallel group running at once. Default 10. */
  readonly maxParallel?: number;
  readonly preSchedule?: SchedulerConfig['preSchedule'];
}

/** Which list `tools` gives: with options, only the tools the policy lets that tenant call at all. */
export interface ToolListOptions {
  /** Leaves out the tools the policy denies this tenant outright (`undefined`: calls without a tenant). */
  readonly tenant: string | undefined;
}

export interface Engine {
  readonly registry: ToolRegistry;
  schemas(): ToolSchema[];
  /**
   * The model-facing tool list in one provider's format, typed as that provider's SDK expects
   * (`engine.tools('anthropic')` is `AnthropicTool[]`); MCP entries carry `outputSchema` where declared.
   */
  tools<P extends ProviderId>(provider: P, options?: ToolListOptions): ProviderTool<P>[];
  run(calls: readonly ToolCallRequest[], options?: TurnOptions): Promise<ToolResult[]>;
  /** Runs one provider message's tool calls and marshals the results back into that format. */
  runMessage<P extends ProviderId>(provider: P, message: unknown, options?: TurnOptions): Promise<{ results: ToolResult[]; messages: ProviderToolMessage<P>[] }>;
  presentCall(name: string, args: JsonObject | undefined): Card;
  presentResult(args: JsonObject | undefined, result: ToolResult): Card;
  /** Whether the policy denies every call of this tool by this tenant, whatever its arguments (Code Mode does not offer such tools). */
  deniesOutright(toolName: string, tenant: string | undefined): boolean;
}

function positive(path: string, value: unknown, integer: boolean): void {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0 || (integer && !Number.isInteger(value))) {
    throw new AirlockError('INVALID_OPTION', `${path} must be a positive ${integer ? 'integer' : 'number'}`, { path });
  }
}

function isPolicy(value: unknown): value is PermissionPolicy {
  try {
    return typeof value === 'object' && value !== null && typeof (value as PermissionPolicy).decide === 'function';
  } catch {
    return false; // read again as a config, which says it could not be read
  }
}

/** The engine's policy with the sources' rules joined in; see EngineOptions.sources. */
function joinPolicy(policy: PolicyConfig | PermissionPolicy, sourceRules: readonly PolicyRule[]): PermissionPolicy {
  if (!isPolicy(policy)) {
    if (sourceRules.length === 0) return createPolicy(policy);
    // Read as createPolicy reads it (a getter, an inherited key), not with a spread (own enumerable keys only).
    const config = plainOptions<PolicyConfig>(policy, ['default', 'rules'], 'policy', 'an object ({ default, rules? }) or a PermissionPolicy');
    const own: unknown = config.rules;
    if (own !== undefined && !Array.isArray(own)) return createPolicy(config as PolicyConfig);
    const rules = listCopy((own ?? []) as unknown[]) as PolicyRule[];
    // Checked alone first, so a mistake is named by its place in the host's own list (policy.rules[0]), not in the joined one.
    createPolicy({ default: config.default as PolicyConfig['default'], rules });
    return createPolicy({ default: config.default as PolicyConfig['default'], rules: [...sourceRules, ...rules] });
  }
  if (sourceRules.length === 0) return policy;
  const fromSources = createPolicy({ default: 'allow', rules: sourceRules });
  return {
    decide(toolName, args, tenant) {
      const own = policy.decide(toolName, args, tenant);
      containRejection(own); // the gate reads an async policy's promise as no decision: a denial
      const sourced = fromSources.decide(toolName, args, tenant);
      return STRICTNESS[sourced.decision] > STRICTNESS[own.decision] ? sourced : own;
    },
    deniesOutright: (toolName, tenant) => deniedOutright(policy, toolName, tenant) || fromSources.deniesOutright?.(toolName, tenant) === true,
  };
}

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const;

/** Limits that are timers: not integers only, and at most what setTimeout can wait. */
const TIMEOUT_LIMITS: readonly (keyof PipelineLimits)[] = ['approvalTimeoutMs', 'guardTimeoutMs', 'preScheduleTimeoutMs'];

/** Only the literal `true` hides a tool; an async custom policy's promise hides nothing, and its rejection is handled. */
function deniedOutright(policy: PermissionPolicy, toolName: string, tenant: string | undefined): boolean {
  const denied: unknown = policy.deniesOutright?.(toolName, tenant);
  containRejection(denied);
  return denied === true;
}

const ENGINE_OPTIONS = ['sources', 'tools', 'registry', 'policy', 'approver', 'guards', 'executeWrappers', 'observers', 'limits', 'maxParallel', 'preSchedule'] as const;
const OBSERVERS = ['onResult', 'onStage', 'onLateSettlement', 'onError'] as const;

/**
 * What a host-supplied list (tools, a source's tools) holds, read once: what reading it throws,
 * or a value that is no list, is INVALID_OPTION naming where, not a TypeError from deep inside.
 * (What is in it is checked as it is registered.)
 */
function readList<T>(read: () => Iterable<T> | null | undefined, path: string): T[] {
  try {
    const list = read();
    // An async tools() answers a promise: no list, and its rejection handled (unhandled, Node ends the host).
    containRejection(list);
    if (list === null || typeof list !== 'object' || typeof (list as { [Symbol.iterator]?: unknown })[Symbol.iterator] !== 'function') throw new AirlockError('INVALID_OPTION', `${path} must give a list of tools`, { path });
    return [...list];
  } catch (error) {
    if (AirlockError.isInstance(error)) throw error;
    throw new AirlockError('INVALID_OPTION', `${path} could not be read (${messageOf(error)})`, { path }, { cause: error });
  }
}

/** The host's own rules (a policy config's) whose tool names or globs match no registered tool. */
function refuseRulesMatchingNoTool(policy: PolicyConfig | PermissionPolicy, names: readonly string[]): void {
  if (isPolicy(policy)) return;
  const rules = (policy as { rules?: unknown }).rules;
  if (!Array.isArray(rules)) return;
  listCopy(rules as unknown[]).forEach((rule, index) => {
    const tool = (rule as { tool?: unknown }).tool;
    const patterns = typeof tool === 'string' ? [tool] : Array.isArray(tool) ? listCopy(tool as unknown[]) : [];
    for (const pattern of patterns) {
      if (typeof pattern !== 'string' || names.some(toolNameMatcher(pattern))) continue;
      const path = `policy.rules[${index}].tool`;
      throw new AirlockError('INVALID_OPTION', `${path} "${pattern}" matches no tool of this engine${didYouMean(pattern, names)}, so the rule can never apply`, { path });
    }
  });
}

/** A source's rules, each checked here so a mistake names the source, not a place in the joined list. */
function sourceRulesOf(source: ToolSource, index: number): PolicyRule[] {
  const path = `options.sources[${index}].policyRules()`;
  let rules: unknown;
  try {
    rules = source.policyRules();
  } catch (error) {
    throw new AirlockError('INVALID_OPTION', `${path} could not be read (${messageOf(error)})`, { path }, { cause: error });
  }
  containRejection(rules);
  if (!Array.isArray(rules)) throw new AirlockError('INVALID_OPTION', `${path} must give a list of policy rules`, { path });
  const list = listCopy(rules as unknown[]) as PolicyRule[];
  try {
    createPolicy({ default: 'allow', rules: list });
  } catch (error) {
    if (!AirlockError.isInstance(error)) throw error;
    throw new AirlockError('INVALID_OPTION', error.message.replace(/^policy\.rules/, path), { path: String(error.details?.path ?? path).replace(/^policy\.rules/, path) });
  }
  return list;
}

/** A list of functions (guards, wrappers), read once. */
function functions<T>(value: unknown, path: string): T[] {
  if (value === undefined) return [];
  if (!Array.isArray(value)) throw new AirlockError('INVALID_OPTION', `${path} must be a list of functions`, { path });
  const list = listCopy(value as unknown[]);
  list.forEach((entry, index) => {
    if (typeof entry !== 'function') throw new AirlockError('INVALID_OPTION', `${path}[${index}] must be a function`, { path: `${path}[${index}]` });
  });
  return list as T[];
}

/**
 * The engine: one registry, one policy, one pipeline. Every call walks parse, permission
 * gate, guards, execute, post-process, and comes back as exactly one result. Throws
 * AirlockError INVALID_OPTION naming the option's path when an option is wrong.
 */
export function createEngine(given: EngineOptions): Engine {
  const options = plainOptions<EngineOptions>(given, ENGINE_OPTIONS, 'options') as EngineOptions;
  if (options.policy === undefined) throw new AirlockError('INVALID_OPTION', 'options.policy is required (e.g. { default: "allow" })', { path: 'options.policy' });
  const maxParallel = options.maxParallel ?? 10;
  positive('options.maxParallel', maxParallel, true);
  const limits: PipelineLimits = { ...DEFAULT_LIMITS, ...(options.limits === undefined ? {} : plainOptions<PipelineLimits>(options.limits, Object.keys(DEFAULT_LIMITS) as (keyof PipelineLimits)[], 'options.limits')) };
  const observers = options.observers === undefined ? {} : plainOptions<PipelineObservers>(options.observers, OBSERVERS, 'options.observers');
  for (const key of OBSERVERS) {
    if (observers[key] !== undefined && typeof observers[key] !== 'function') throw new AirlockError('INVALID_OPTION', `options.observers.${key} must be a function`, { path: `options.observers.${key}` });
  }
  const guards = functions<Guard>(options.guards, 'options.guards');
  const executeWrappers = functions<ExecuteWrapper>(options.executeWrappers, 'options.executeWrappers');
  if (options.preSchedule !== undefined && typeof options.preSchedule !== 'function') throw new AirlockError('INVALID_OPTION', 'options.preSchedule must be a function', { path: 'options.preSchedule' });
  if (options.tools !== undefined && typeof (options.tools as { [Symbol.iterator]?: unknown } | null)?.[Symbol.iterator] !== 'function') {
    throw new AirlockError('INVALID_OPTION', 'options.tools must be a list of tools (from defineTool)', { path: 'options.tools' });
  }
  for (const key of Object.keys(DEFAULT_LIMITS) as (keyof PipelineLimits)[]) positive(`options.limits.${key}`, limits[key], !TIMEOUT_LIMITS.includes(key));
  for (const key of TIMEOUT_LIMITS) {
    if (limits[key] > MAX_TIMER_MS) throw new AirlockError('INVALID_OPTION', `options.limits.${key} must be at most ${MAX_TIMER_MS} (about 24.8 days: a longer timer fires at once)`, { path: `options.limits.${key}` });
  }
  if (options.approver !== undefined && typeof options.approver !== 'function') throw new AirlockError('INVALID_OPTION', 'options.approver must be a function', { path: 'options.approver' });

  const sources = options.sources ?? [];
  if (!Array.isArray(sources)) throw new AirlockError('INVALID_OPTION', 'options.sources must be an array of tool sources', { path: 'options.sources' });
  sources.forEach((source: unknown, index) => {
    const candidate = source as Partial<ToolSource> | null;
    if (typeof candidate !== 'object' || candidate === null || typeof candidate.tools !== 'function' || typeof candidate.policyRules !== 'function') {
      throw new AirlockError('INVALID_OPTION', `options.sources[${index}] must have tools() and policyRules() (a sandbox, for example)`, { path: `options.sources[${index}]` });
    }
  });

  if (options.registry !== undefined && !ToolRegistry.isRegistry(options.registry)) throw new AirlockError('INVALID_OPTION', 'options.registry must be a ToolRegistry', { path: 'options.registry' });
  const registry = options.registry ?? new ToolRegistry();
  sources.forEach((source, index) => {
    for (const tool of readList<AnyTool>(() => source.tools(), `options.sources[${index}].tools()`)) registry.register(tool);
  });
  for (const tool of readList(() => options.tools ?? [], 'options.tools')) registry.register(tool);
  const sourceRules = sources.flatMap((source, index) => sourceRulesOf(source, index));
  const preSchedules = [...sources.map((source) => source.preSchedule), options.preSchedule].filter((hook): hook is PreSchedule => hook !== undefined);
  const policy = joinPolicy(options.policy, sourceRules);
  // A rule naming no tool protects nothing: a misspelt `delete-file` for `delete_file` let every
  // call through (an outside tester's find). Checked when the engine holds all its tools (its
  // own registry); a manifest's rules are checked by the sandbox.
  if (options.registry === undefined) refuseRulesMatchingNoTool(options.policy, registry.names());
  const config: SchedulerConfig = {
    registry,
    policy,
    approver: options.approver,
    guards,
    executeWrappers,
    observers,
    limits,
    maxParallel,
    preSchedule:
      preSchedules.length <= 1
        ? preSchedules[0]
        : async (calls, turn) => {
            for (const hook of preSchedules) await hook(calls, turn);
          },
  };

  const run = (calls: readonly ToolCallRequest[], turn?: TurnOptions): Promise<ToolResult[]> => {
    // A caller's mistake, said as an AirlockError (a Set or null would fail deep inside as a TypeError).
    if (!Array.isArray(calls)) return Promise.reject(new AirlockError('INVALID_OPTION', 'run(calls): calls must be an array of tool calls', { path: 'calls' }));
    const turnOptions = readTurnOptions(turn);
    if (AirlockError.isInstance(turnOptions)) return Promise.reject(turnOptions);
    let list: readonly ToolCallRequest[];
    try {
      list = Array.prototype.slice.call(calls) as ToolCallRequest[]; // read once: a Proxy's traps run here, not mid-turn
    } catch (error) {
      return Promise.reject(new AirlockError('INVALID_OPTION', 'run(calls): the list of calls could not be read', { path: 'calls' }, { cause: error }));
    }
    return runTurn(config, list, turnOptions);
  };
  const deniesOutright = (toolName: string, tenant: string | undefined): boolean => deniedOutright(policy, toolName, tenant);
  const formatOf = <P extends ProviderId>(provider: P): (typeof PROVIDERS)[P] => {
    if (typeof provider !== 'string' || !Object.hasOwn(PROVIDERS, provider)) throw new AirlockError('INVALID_OPTION', `unknown provider ${JSON.stringify(String(provider))} (one of ${Object.keys(PROVIDERS).join(', ')})`, { path: 'provider' });
    return PROVIDERS[provider];
  };
  return {
    registry,
    schemas: () => registry.schemas(),
    // Each provider's format returns its own types; the casts restate what PROVIDERS[provider] holds.
    tools: <P extends ProviderId>(provider: P, options?: ToolListOptions) => {
      // Checked before the list is built: a bad provider is INVALID_OPTION whatever the options.
      const format = provider === 'mcp' ? undefined : formatOf(provider);
      const listed = options === undefined ? undefined : plainOptions<ToolListOptions>(options, ['tenant'], 'options', 'an object ({ tenant })');
      if (listed?.tenant !== undefined && typeof listed.tenant !== 'string') throw new AirlockError('INVALID_OPTION', 'options.tenant must be a string', { path: 'options.tenant' });
      const schemas = listed === undefined ? registry.schemas() : registry.schemas().filter((schema) => !deniesOutright(schema.name, listed.tenant));
      return (format === undefined
        ? mcpToolsWithOutput(schemas.map((schema) => ({ schema, output: sharedOutputSchema(registry.get(schema.name)?.definition) })))
        : format.tools(schemas)) as ProviderTool<P>[];
    },
    run,
    async runMessage<P extends ProviderId>(provider: P, message: unknown, turn?: TurnOptions) {
      const format = formatOf(provider);
      let calls: readonly ToolCallRequest[];
      try {
        calls = format.parseCalls(message);
      } catch (error) {
        if (AirlockError.isInstance(error)) throw error;
        throw new AirlockError('INVALID_PROVIDER_MESSAGE', `runMessage: the ${provider} message could not be read`, { provider }, { cause: error });
      }
      const results = await run(calls, turn);
      // MCP's reply carries structuredContent for a tool whose tools/list entry (above) declares an outputSchema.
      const messages = provider === 'mcp' ? results.map((result) => mcpCallToolResult(result, sharedOutputSchema(registry.get(result.name)?.definition))) : format.toolMessages(results);
      return { results, messages: messages as ProviderToolMessage<P>[] };
    },
    presentCall: (name, args) => presentCall(registry.get(name), name, args),
    presentResult: (args, result) => presentResult(registry.get(result.name), args, result),
    deniesOutright,
  };
}

/**
 * The turn's options read once (what the turn then uses), or the AirlockError saying what is
 * wrong: a caller's mistake said as INVALID_OPTION, not met deep inside as a TypeError.
 */
function readTurnOptions(turn: unknown): TurnOptions | AirlockError | undefined {
  if (turn === undefined) return undefined;
  let read: Partial<TurnOptions>;
  try {
    read = plainOptions<TurnOptions>(turn, ['signal', 'tenant'], 'options', 'an object ({ signal?, tenant? })');
  } catch (error) {
    if (!AirlockError.isInstance(error)) throw error;
    return new AirlockError('INVALID_OPTION', `run(calls, options): ${error.message}`, error.details);
  }
  const { signal, tenant } = read as { signal?: unknown; tenant?: unknown };
  if (signal !== undefined && (typeof signal !== 'object' || signal === null || typeof (signal as AbortSignal).aborted !== 'boolean' || typeof (signal as AbortSignal).addEventListener !== 'function')) {
    return new AirlockError('INVALID_OPTION', 'run(calls, options): options.signal must be an AbortSignal', { path: 'options.signal' });
  }
  if (tenant !== undefined && typeof tenant !== 'string') return new AirlockError('INVALID_OPTION', 'run(calls, options): options.tenant must be a string', { path: 'options.tenant' });
  return read as TurnOptions;
}
