// Glue: a sandbox with the given plugins, and an engine whose policy is the plugins'
// manifests. Plugin faults become one-line usage errors naming the manifest path.
import { createEngine, DEFAULT_CODE_TOOL_NAME, type Approver, type Engine, type PipelineObservers } from '@airlock/core';
import { createCodeMode, createRemoteSandbox, createSandbox, SandboxError, type Capability, type Sandbox, type StandardCapabilityOptions } from '@airlock/sandbox';
import { asExecutorsFlagMessage, type ExecutorsTarget } from './executors-flag.js';
import { asFlagMessage, withOfferHint } from './host-capabilities.js';
import { visible } from './terminal-text.js';
import { UsageError } from './usage-error.js';

export interface OpenEngine {
  readonly engine: Engine;
  readonly sandbox: Sandbox;
  close(): Promise<void>;
}

export async function openSandbox(pluginPaths: readonly string[], capabilities: Record<string, Capability> | undefined, standard: StandardCapabilityOptions = {}, executors?: ExecutorsTarget): Promise<Sandbox> {
  if (pluginPaths.length === 0) throw new UsageError('--plugins <dir> is required (a plugin folder or a folder of plugin folders)');
  let sandbox: Sandbox;
  try {
    const options = { ...standard, ...(capabilities === undefined ? {} : { capabilities }) };
    // --executors: the same sandbox, whose plugin code runs on executor processes (connects now, fails fast).
    sandbox = executors === undefined ? createSandbox(options) : await createRemoteSandbox({ ...options, ...executors });
  } catch (error) {
    if (SandboxError.isInstance(error)) throw new UsageError(asFlagMessage(executors === undefined ? error.message : asExecutorsFlagMessage(error.message)));
    throw error;
  }
  try {
    const loaded = await sandbox.loadPlugins(pluginPaths);
    writeWarnings(loaded.flatMap((plugin) => plugin.warnings ?? []));
  } catch (error) {
    await sandbox.close();
    if (SandboxError.isInstance(error)) {
      const more = error.problems.length > 1 ? ` (and ${error.problems.length - 1} more problem${error.problems.length > 2 ? 's' : ''}; run "airlock check" for all)` : '';
      throw new UsageError(`${withOfferHint(error.problems[0] ?? error.message)}${more}`);
    }
    throw error;
  }
  return sandbox;
}

export interface OpenEngineOptions {
  readonly approver?: Approver;
  readonly observers?: PipelineObservers;
  readonly capabilities?: Record<string, Capability> | undefined;
  readonly standard?: StandardCapabilityOptions;
  /**
   * Code Mode: the engine returned offers only the code tool (`run_code`), whose programs call
   * the plugins' tools through the plugins' engine (its policy, approver, scheduler). The
   * description declares the tools this tenant may use.
   */
  readonly codeMode?: { readonly tenant: string | undefined } | undefined;
  /** `--executors <url>`: sandboxed calls go to remote executors through this engine instead of local processes. */
  readonly executors?: ExecutorsTarget | undefined;
}

export async function openEngine(pluginPaths: readonly string[], options: OpenEngineOptions = {}): Promise<OpenEngine> {
  const sandbox = await openSandbox(pluginPaths, options.capabilities, options.standard, options.executors);
  const engine = createEngine({
    tools: sandbox.tools(),
    // Tools come only from plugins, whose manifests speak for them; anything else is denied.
    policy: { default: 'deny', rules: sandbox.policyRules() },
    preSchedule: sandbox.preSchedule,
    ...(options.approver === undefined ? {} : { approver: options.approver }),
    // In Code Mode the observers watch the program's call, not its sub-calls.
    ...(options.observers === undefined || options.codeMode !== undefined ? {} : { observers: options.observers }),
  });
  if (options.codeMode === undefined) return { engine, sandbox, close: () => sandbox.close() };
  const codeMode = codeModeOver(engine, sandbox);
  const outer = createEngine({
    tools: [codeMode.tool(options.codeMode.tenant === undefined ? {} : { tenant: options.codeMode.tenant })],
    // The code tool itself is always allowed: each tool a program calls is decided by the plugins' policy.
    policy: { default: 'allow' },
    ...(options.observers === undefined ? {} : { observers: options.observers }),
  });
  return { engine: outer, sandbox, close: () => sandbox.close() };
}

/** What loaded but the operator should know (a secret the manifest names and no --secret gives), on stderr. */
export function writeWarnings(warnings: readonly string[]): void {
  for (const warning of warnings) process.stderr.write(`airlock: warning: ${warningText(warning)}\n`);
}

/** A sandbox warning for the terminal: escaped, with the flag that answers it. */
export function warningText(warning: string): string {
  // Only the sandbox's own sentence, to its end: a plugin's tool may name a field "x: secrets.KEY: ...",
  // and its warning goes on with our words after it.
  const name = /: secrets\.([A-Za-z_][A-Za-z0-9_]*): this host supplies no value for it, so fetch refuses requests to its origins$/.exec(warning)?.[1];
  return `${visible(warning)}${name === undefined ? '' : ` (give it with --secret ${name}=env:VARIABLE)`}`;
}

/**
 * --code-mode's Code Mode over the plugins' engine. A plugin's tool named like the code tool
 * would vanish behind it, never callable, without a word: a usage error naming it instead.
 */
export function codeModeOver(engine: Engine, sandbox: Sandbox): ReturnType<typeof createCodeMode> {
  const clash = codeToolClash(engine.registry.names());
  if (clash !== undefined) throw new UsageError(clash);
  return createCodeMode({ engine, sandbox });
}

/** The usage error when a plugin's tool has the code tool's name, else undefined. */
export function codeToolClash(toolNames: readonly string[]): string | undefined {
  return toolNames.includes(DEFAULT_CODE_TOOL_NAME) ? `--code-mode: a plugin's tool is named "${DEFAULT_CODE_TOOL_NAME}", the name of the code tool, which would hide it; rename that tool, or run without --code-mode` : undefined;
}
