// airlock run: execute the tool calls of a model message through the full pipeline
// and the sandbox, and print the tool messages in the same provider format.
import { detectToolCallMessage, PROVIDERS, AirlockError, type Approver, type Engine, type JsonObject, type PipelineObservers, type ProviderFormat, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { join } from 'node:path';
import { approverFor, unknownApprovals } from '../support/approvers.js';
import { DEBUG_HELP, debugEnabled, debugOnError } from '../support/debug-output.js';
import { examplesDir } from '../support/examples.js';
import { INTERRUPTED_EXIT, onInterrupt } from '../support/interrupt.js';
import { HOST_CAPABILITY_FLAGS, HOST_CAPABILITY_HELP, standardOptions } from '../support/host-capabilities.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { DEFAULT_TENANT, workspaceFolder, type Sandbox, type StandardCapabilityOptions } from '@airlock/sandbox';
import { openEngine } from '../support/open-engine.js';
import { EXECUTORS_FLAG, EXECUTORS_HELP, executorsTarget } from '../support/executors-flag.js';
import { parseArgs } from 'node:util';
import { withUsage } from '../support/parse-command-args.js';
import { plural } from '../support/plural.js';
import { createProgress } from '../support/progress.js';
import { logName } from '../support/log-name.js';
import { readJsonInput, refuseCallsWithoutIds, refuseRoundedArguments } from '../support/read-input.js';
import { renderCards } from '../support/render-cards.js';
import { stylist, useColor } from '../support/style.js';
import { jsonText, visible } from '../support/terminal-text.js';
import { UsageError } from '../support/usage-error.js';

export const RUN_HELP = `Usage: airlock run [transcript|-] --plugins <dir>... [options]

Executes the tool calls of a model message (OpenAI "tool_calls", Anthropic "tool_use",
OpenAI Responses "function_call" or Gemini "functionCall", detected automatically) and
prints the tool messages in the same provider format. The input may be one message, an
array of messages or of Responses items, one "function_call" item, { "messages": [...] },
Gemini's { "contents": [...] }, or a raw API response ({ "choices" }, { "output" },
{ "candidates" }, one choice or candidate); the last assistant turn runs, those of its
calls no tool reply answers yet. The input must be UTF-8. With no arguments at all, runs
the bundled example.

Options:
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --json              print the machine-readable report: { messages, results }
  --format <kind>     "cards" (default on a terminal) or "messages" (default when piped); not with --json
  --approve <tool>    answer "ask" with yes for this tool (repeatable)
  --approve-all       answer every "ask" with yes
  --tenant <id>       run as this tenant (its own isolates; default "default")
  --code-mode         offer one tool, run_code: the model's program calls the plugins' tools,
                      each call through the permission gate (see docs/code-mode.md); with no
                      transcript, runs the bundled Code Mode example
  --capabilities <m>  an ES module whose default export names host functions plugins may be
                      granted ({ "kv.get": (arg, ctx) => ... }); your code, run in this process
${HOST_CAPABILITY_HELP}
${EXECUTORS_HELP}
${DEBUG_HELP}
  -h, --help          show this help

Tool failures are results, not a failing exit code. Exit codes: 0 ran, 2 bad usage or input,
130 interrupted: Ctrl-C cancels the running calls (all of them while plugins load), then
every result is printed.
On a terminal, stderr shows each running call with its elapsed time.
On a terminal without --approve, you are asked; otherwise "ask" ends as APPROVAL_UNAVAILABLE.

Examples:
  airlock run
  airlock run --code-mode
  airlock run transcript.json --plugins ./plugins --json
  cat message.json | airlock run - --plugins ./plugins/notes --approve delete_note`;

function argumentsForDisplay(call: ToolCallRequest): JsonObject | undefined {
  const raw = call.arguments;
  try {
    const value: unknown = typeof raw === 'string' ? JSON.parse(raw) : raw;
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as JsonObject) : undefined;
  } catch {
    return undefined;
  }
}

export async function runCommand(argv: string[]): Promise<number> {
  const { values, positionals } = withUsage('run', () => parseArgs({ args: argv, allowPositionals: true, strict: true, options: {
    plugins: { type: 'string', multiple: true },
    json: { type: 'boolean' },
    format: { type: 'string' },
    approve: { type: 'string', multiple: true },
    'approve-all': { type: 'boolean' },
    tenant: { type: 'string' },
    capabilities: { type: 'string' },
    'code-mode': { type: 'boolean' },
    ...HOST_CAPABILITY_FLAGS,
    ...EXECUTORS_FLAG,
    debug: { type: 'boolean' },
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`run takes one transcript, got ${positionals.length} (see "airlock run --help")`);
  if (values.format !== undefined && values.format !== 'cards' && values.format !== 'messages') throw new UsageError('--format must be "cards" or "messages"');
  if (values.format !== undefined && values.json === true) throw new UsageError('--json prints the report (the messages and every result); --format chooses between the other two outputs: give one of them');
  if (values.tenant !== undefined && !/^[\w.:@-]{1,128}$/.test(values.tenant)) throw new UsageError('--tenant must be 1-128 letters, digits or . _ : @ -');
  if (values['code-mode'] === true && values.executors !== undefined) throw new UsageError('--code-mode cannot run with --executors: programs run in a sandbox of their own that no executor serves (every program would end ABORTED_BEFORE_DISPATCH)');
  const executors = executorsTarget(values);

  let source = positionals[0];
  let plugins = values.plugins ?? [];
  if (source === undefined && plugins.length === 0) {
    // The embedded default: the bundled example.
    const dir = examplesDir();
    source = join(dir, values['code-mode'] === true ? 'code-mode-transcript.json' : 'transcript.json');
    plugins = [join(dir, 'plugins')];
  }
  if (source === undefined) {
    if (process.stdin.isTTY) throw new UsageError('give a transcript file, or "-" to read one from standard input (see "airlock run --help")');
    source = '-';
  }

  const { value: input, rounded } = await readJsonInput(source);
  const label = source === '-' ? 'standard input' : source;
  let format: ProviderFormat;
  let calls: ToolCallRequest[];
  try {
    const detected = detectToolCallMessage(input);
    format = PROVIDERS[detected.provider];
    calls = format.parseCalls(detected.message);
  } catch (error) {
    // Bad input: one line naming the source, exit 2.
    if (AirlockError.isInstance(error)) throw new UsageError(`${label}: ${error.message}`);
    throw error;
  }
  refuseCallsWithoutIds(calls, format.id, label);
  refuseRoundedArguments(calls, rounded, label);

  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true && source !== '-';
  const progress = process.stderr.isTTY === true && process.env.TERM !== 'dumb' ? createProgress(process.stderr, stylist(useColor(process.stderr))) : undefined;
  const asked = approverFor({ approveAll: values['approve-all'] === true, approve: values.approve ?? [], interactive });
  // The progress lines make way for a question at the terminal.
  const approver: Approver | undefined = asked === undefined || progress === undefined ? asked : async (request, signal) => {
    progress.pause();
    try {
      return await asked(request, signal);
    } finally {
      progress.resume();
    }
  };
  // From here (the transcript is read) Ctrl-C is ours: while the host's capabilities and the
  // plugins load it cancels every call before it starts (each is printed as
  // ABORTED_BEFORE_DISPATCH); a load that outlasts the grace period is left with one line.
  const standard = standardOptions(values);
  const interrupt = onInterrupt();
  const names = new Map(calls.map((call) => [call.id, call.name]));
  const finished: ToolResult[] = [];
  const onError = debugOnError(debugEnabled(values.debug));
  const observers: PipelineObservers = {
    onResult: (result) => finished.push(result),
    ...(onError === undefined ? {} : { onError }),
    ...(progress === undefined ? {} : {
      // Every call of the turn is parsed before any runs: a call counts as running from its next stage.
      onStage: ({ callId, stage }) => (stage === 'parse' ? undefined : stage === 'result' ? progress.finished(callId) : progress.started(callId, names.get(callId) ?? '?')),
    }),
  };
  const codeMode = values['code-mode'] === true ? { tenant: values.tenant } : undefined;
  let opened: Awaited<ReturnType<typeof openEngine>>;
  try {
    const capabilities = await loadCapabilities(values.capabilities);
    const loading = openEngine(plugins, { ...(approver === undefined ? {} : { approver }), capabilities, observers, standard, codeMode, executors });
    const ready = await Promise.race([loading, interrupt.givenUp.then(() => undefined)]);
    if (ready === undefined) {
      progress?.stop();
      process.stderr.write(`airlock: interrupted while the plugins were loading: none of the ${plural(calls.length, 'call')} ran\n`);
      process.exit(INTERRUPTED_EXIT);
    }
    opened = ready;
  } catch (error) {
    interrupt.dispose();
    throw error;
  }
  // The plugins' tools, which `ask` can stop: in Code Mode the program's sub-calls (the outer engine holds only run_code).
  const unapprovable = unknownApprovals(values.approve ?? [], opened.sandbox.tools().map((tool) => tool.name));
  if (unapprovable !== undefined) {
    interrupt.dispose();
    await opened.close();
    throw new UsageError(unapprovable);
  }
  let results: ToolResult[];
  let gaveUp = false;
  try {
    const run = opened.engine.run(calls, { signal: interrupt.signal, ...(values.tenant === undefined ? {} : { tenant: values.tenant }) });
    // After Ctrl-C, cancelled calls come back as results within the grace period; if they
    // do not, the calls that finished are printed anyway.
    results = await Promise.race([run, interrupt.givenUp.then(() => ((gaveUp = true), [...finished]))]);
  } catch (error) {
    await opened.close();
    throw error;
  } finally {
    progress?.stop();
    interrupt.dispose();
  }
  const exitCode = interrupt.signal.aborted ? INTERRUPTED_EXIT : 0;
  printResults(values, format, calls, results, opened.engine);
  writeWorkspaceNote(opened.sandbox, results, standard, values.tenant);
  finish(exitCode, calls.length, results);
  if (gaveUp) {
    // The sandbox did not give the cancelled calls back in time: what finished is printed,
    // and nothing this process still holds is worth waiting for.
    process.exit(INTERRUPTED_EXIT);
  }
  await opened.close();
  return exitCode;
}

function printResults(values: { json?: boolean | undefined; format?: string | undefined }, format: ProviderFormat, calls: readonly ToolCallRequest[], results: readonly ToolResult[], engine: Engine): void {
  const messages = format.toolMessages(results);

  if (values.json === true) {
    const report = {
      messages,
      results: results.map((result) => ({
        callId: result.callId,
        name: result.name,
        isError: result.isError,
        ...(result.isError ? { error: result.error } : { value: result.value }),
        durationMs: result.durationMs,
        ...(result.approvalMs === undefined ? {} : { approvalMs: result.approvalMs }),
        ...(result.metadata?.logs === undefined ? {} : { logs: result.metadata.logs }),
        ...(result.metadata?.logsDropped === undefined ? {} : { logsDropped: result.metadata.logsDropped }),
      })),
    };
    process.stdout.write(`${jsonText(report)}\n`);
    return;
  }
  writePluginLogs(results);
  const cards = values.format === 'cards' || (values.format === undefined && process.stdout.isTTY === true);
  if (cards) {
    const views = results.map((result, index) => ({ name: calls[index]!.name, args: argumentsForDisplay(calls[index]!), result }));
    process.stdout.write(renderCards(engine, views, stylist(useColor(process.stdout))));
  } else {
    process.stdout.write(`${jsonText(messages)}\n`);
  }
}

/** What plugins' consoles said, per call, on stderr: for the operator, never in the tool messages. */
function writePluginLogs(results: readonly ToolResult[]): void {
  for (const result of results) {
    const logs = result.metadata?.logs;
    if (!Array.isArray(logs)) continue;
    for (const line of logs) {
      const { level, message } = line as { level?: unknown; message?: unknown };
      process.stderr.write(`${visible(`${logName(result.name)} (${logName(result.callId)}) ${String(level)}: ${String(message)}`)}\n`);
    }
    const dropped = result.metadata?.logsDropped;
    if (typeof dropped === 'number') process.stderr.write(`${visible(`${logName(result.name)} (${logName(result.callId)}): ${dropped} more log lines dropped`)}\n`);
  }
}

/** Where a successful call of a plugin that may write the workspace put its files. */
function writeWorkspaceNote(sandbox: Sandbox, results: readonly ToolResult[], standard: StandardCapabilityOptions, tenant: string | undefined): void {
  if (typeof standard.workspace !== 'string') return;
  const grantsWorkspace = (names: readonly string[] | undefined): boolean => (names ?? []).some((name) => name === 'workspace' || name.startsWith('workspace.'));
  const writers = new Set(sandbox.plugins().filter((plugin) => grantsWorkspace(plugin.manifest.capabilities)).flatMap((plugin) => plugin.tools.map((tool) => tool.name)));
  // A Code Mode program's sub-calls count too: its value lists them.
  const subCalls = (result: ToolResult): { name?: unknown; isError?: unknown }[] => {
    const calls = !result.isError && typeof result.value === 'object' && result.value !== null && !Array.isArray(result.value) ? (result.value as { calls?: unknown }).calls : undefined;
    return Array.isArray(calls) ? (calls as { name?: unknown; isError?: unknown }[]) : [];
  };
  const wrote = (result: ToolResult): boolean => !result.isError && (writers.has(result.name) || subCalls(result).some((call) => call.isError === false && typeof call.name === 'string' && writers.has(call.name)));
  if (!results.some(wrote)) return;
  process.stderr.write(`${visible(`airlock: workspace files are in ${workspaceFolder(standard.workspace, tenant ?? DEFAULT_TENANT)}`)}\n`);
}

/** After Ctrl-C: say on stderr what the printed results cover, and exit 130. */
function finish(exitCode: number, callCount: number, results: readonly ToolResult[]): void {
  if (exitCode === INTERRUPTED_EXIT) {
    const cancelled = results.filter((result) => result.isError && (result.error.code === 'ABORTED' || result.error.code === 'ABORTED_BEFORE_DISPATCH')).length;
    const done = results.length - cancelled;
    const unanswered = callCount - results.length;
    process.stderr.write(`airlock: interrupted: ${plural(done, 'call')} finished${cancelled > 0 ? `, ${cancelled} cancelled` : ''}${unanswered > 0 ? `, ${unanswered} not answered` : ''}\n`);
  }
}
