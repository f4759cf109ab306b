// Code Mode on a sandbox: a program runs as a call of one built-in "plugin" whose module is
// the Code Mode runtime, so it gets everything a plugin call gets and nothing more: a fresh
// realm in the tenant's own isolate, in a supervised sandbox process, admitted by fair share,
// watched for CPU, heap and wall clock, its result size-checked inside the isolate, its
// console bounded, and one capability (the tool call) scoped by token to this very call.
import { AirlockError, codeModeLimits, createCodeTool, DEFAULT_CODE_TOOL_NAME, type AnyTool, type CodeLogLine, type CodeModeLimits, type CodeRunner, type Engine, type JsonObject, type JsonValue, type SubCallAnswer } from '@airlock/core';
import { createHash, randomUUID } from 'node:crypto';
import { MAX_CAPABILITY_BYTES, MAX_CAPABILITY_REQUESTS } from '../isolate/live-call.js';
import type { PluginSpec } from '../worker/worker-protocol.js';
import { MIN_MEMORY_MB } from '../manifest/host-limits.js';
import type { LoadedPlugin } from '../plugin/loaded-plugin.js';
import type { Capability } from '../plugin/capability-handler.js';
import { pluginTools, type CallHooks } from '../plugin/plugin-tools.js';
import { sandboxInternals, type Sandbox, type SandboxInternals } from '../sandbox.js';
import { codeModeModuleSource } from './code-mode-runtime.js';
import { DEFAULT_TENANT } from '../plugin/default-tenant.js';
import { TypeStripper } from './type-stripper.js';
import { CODE_MODE_PLUGIN } from './code-mode-plugin.js';


/**
 * One type stripper (and its thread pool) per sandbox, however many Code Modes share it:
 * `airlock serve --code-mode` makes one per session, and a pool each cost its process a
 * thread and about 9 MiB for every session that ran a program in the last ten seconds.
 */
const strippers = new WeakMap<SandboxInternals, TypeStripper>();
function stripperOf(internals: SandboxInternals): TypeStripper {
  let stripper = strippers.get(internals);
  if (stripper === undefined) {
    stripper = new TypeStripper(internals.programAdmission, internals.programThreads, CODE_MODE_PLUGIN);
    strippers.set(internals, stripper);
  }
  return stripper;
}
const CALL_CAPABILITY = 'tools.call';

export interface CodeModeOptions {
  /** The engine whose tools programs call: every sub-call walks its whole pipeline (gate, ask, guards, limits, scheduler). */
  readonly engine: Engine;
  /** The sandbox that runs the programs (its processes, fair share and caps). */
  readonly sandbox: Sandbox;
  /** The code tool's name. Default `run_code`. */
  readonly name?: string;
  /** The program's own limits; isolate limits may not exceed the sandbox's caps. */
  readonly limits?: Partial<CodeModeLimits>;
}

export interface CodeMode {
  readonly limits: CodeModeLimits;
  /**
   * The code tool for one caller: its description declares, in TypeScript, the tools this
   * tenant may use now, and it runs programs for calls of this tenant only (another tenant's
   * call, or one with none, is answered TOOL_ERROR). Register it in an engine of its own, e.g.
   * `createEngine({ tools: [codeMode.tool({ tenant })], policy: { default: 'allow' } })`.
   */
  tool(options?: { readonly tenant?: string }): AnyTool;
}

/** Code Mode over an engine and a sandbox. Throws AirlockError INVALID_OPTION naming a bad option. */
export function createCodeMode(options: CodeModeOptions): CodeMode {
  if (typeof options !== 'object' || options === null) throw new AirlockError('INVALID_OPTION', 'options must be an object', { path: 'options' });
  const internals = sandboxInternals.get(options.sandbox);
  if (internals === undefined) throw new AirlockError('INVALID_OPTION', 'options.sandbox must be a sandbox from createSandbox', { path: 'options.sandbox' });
  const name = options.name ?? DEFAULT_CODE_TOOL_NAME;
  const limits = codeModeLimits(options.limits);
  for (const key of ['memoryMb', 'timeoutMs', 'cpuMs', 'maxOutputBytes'] as const) {
    if (limits[key] > internals.caps[key]) throw new AirlockError('INVALID_OPTION', `options.limits.${key} must be at most ${internals.caps[key]} (the sandbox's cap)`, { path: `options.limits.${key}` });
  }
  if (limits.memoryMb < MIN_MEMORY_MB) throw new AirlockError('INVALID_OPTION', `options.limits.memoryMb must be at least ${MIN_MEMORY_MB}`, { path: 'options.limits.memoryMb' });
  // Each sub-call is one capability request of the program's call, and a call makes at most
  // MAX_CAPABILITY_REQUESTS: more calls would be refused by the channel as TOO_MANY_REQUESTS.
  if (limits.maxCalls > MAX_CAPABILITY_REQUESTS) throw new AirlockError('INVALID_OPTION', `options.limits.maxCalls must be at most ${MAX_CAPABILITY_REQUESTS} (the requests one sandboxed call may make)`, { path: 'options.limits.maxCalls' });
  // Programs run on this machine's sandbox processes: a remote sandbox's executors hold no Code Mode plugin.
  if (internals.remote) throw new AirlockError('INVALID_OPTION', 'options.sandbox must be a local sandbox (createSandbox): Code Mode programs do not run on remote executors; sub-calls of a program still may, through options.engine', { path: 'options.sandbox' });
  if (typeof options.engine?.registry?.has === 'function' && options.engine.registry.has(name)) {
    throw new AirlockError('INVALID_OPTION', `options.engine already has a tool named "${name}" (a plugin's?): a program could not call it, and the code tool would hide it; give the code tool another name (options.name)`, { path: 'options.name' });
  }

  const source = codeModeModuleSource(name, CALL_CAPABILITY);
  const isolateLimits = { memoryMb: limits.memoryMb, timeoutMs: limits.timeoutMs, cpuMs: limits.cpuMs, maxOutputBytes: limits.maxOutputBytes };
  const spec: PluginSpec = {
    // The child caches a module by key: the limits are part of what it runs.
    key: `${CODE_MODE_PLUGIN}@${createHash('sha256').update(source).update(JSON.stringify(isolateLimits)).digest('hex').slice(0, 16)}`,
    name: CODE_MODE_PLUGIN,
    source,
    limits: isolateLimits,
    realm: 'fresh',
    grants: { webAssembly: false, sharedArrayBuffer: false },
    capabilities: [CALL_CAPABILITY],
  };
  const plugin: LoadedPlugin = {
    name: CODE_MODE_PLUGIN,
    dir: '(built in)',
    manifest: { name: CODE_MODE_PLUGIN, module: './code-mode.js' } as LoadedPlugin['manifest'],
    spec,
    tools: [{ name, description: 'A Code Mode program.', parameters: { type: 'object' }, hasClassifier: false }],
  };

  // Each running program's sub-call function, by the id of its sandboxed call: the host hands
  // the capability that id from the call's own context, never from anything the realm says.
  const programs = new Map<string, (argument: JsonValue) => Promise<JsonValue>>();
  const callCapability: Capability = (argument, context) => {
    const program = programs.get(context.callId);
    if (program === undefined) throw new Error('no such program');
    return program(argument);
  };
  // Programs are admitted from their own budget, on threads of their own: see sandbox.ts.
  const hooks: CallHooks = { ...internals.hooks, admission: internals.programAdmission, capabilities: new Map([[CALL_CAPABILITY, callCapability]]) };
  const programTool = pluginTools(plugin, internals.host, new WeakMap(), hooks)[0] as AnyTool;

  const stripper = stripperOf(internals);

  const runner: CodeRunner = async (request) => {
    // Off the main thread, fairly admitted, within the program's own CPU limit (type-stripper.ts).
    const javascript = await stripper.strip(request.code, request.tenant ?? DEFAULT_TENANT, request.limits.cpuMs, request.signal);
    const runId = randomUUID();
    programs.set(runId, async (argument) => answerText(await request.callTool(...subCallOf(argument))));
    let logs: CodeLogLine[] = [];
    let value: JsonValue;
    try {
      value = await programTool.execute({ code: javascript, tools: request.tools, maxCallsInFlight: request.limits.maxCallsInFlight } as JsonObject, {
        callId: runId,
        toolName: name,
        signal: request.signal,
        tenant: request.tenant,
        setMetadata: (metadata) => {
          if (Array.isArray(metadata.logs)) logs = metadata.logs as unknown as CodeLogLine[];
          request.setMetadata(metadata);
        },
      });
    } finally {
      programs.delete(runId);
    }
    return { result: value, logs };
  };

  return {
    limits,
    tool: (toolOptions) => createCodeTool({ engine: options.engine, runner, name, limits, ...(toolOptions?.tenant === undefined ? {} : { tenant: toolOptions.tenant }) }),
  };
}

/** `{ name, args }` from the realm; anything else is a call of no tool. */
function subCallOf(argument: JsonValue): [unknown, unknown] {
  if (argument === null || typeof argument !== 'object' || Array.isArray(argument)) return [undefined, undefined];
  const request = argument as JsonObject;
  return [request.name, request.args];
}

/** The answer as the realm receives it; a value too large for the capability channel is a failure the program can read. */
function answerText(answer: SubCallAnswer): JsonValue {
  if (!answer.ok) return { ok: false, code: answer.code, message: answer.message };
  const reply = { ok: true, value: answer.value };
  const text = JSON.stringify(reply);
  if (text.length * 3 > MAX_CAPABILITY_BYTES && Buffer.byteLength(text, 'utf8') > MAX_CAPABILITY_BYTES) {
    return { ok: false, code: 'OUTPUT_TOO_LARGE', message: `the result is larger than the ${MAX_CAPABILITY_BYTES} bytes a program may receive from one call` };
  }
  return reply;
}
