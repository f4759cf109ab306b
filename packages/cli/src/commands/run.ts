// airlock run: execute the tool calls of a model message through the full pipeline
// and the sandbox, and print the tool messages in the same provider format.
import { detectToolCallMessage, PROVIDERS, AirlockError, type JsonObject, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { join } from 'node:path';
import { approverFor } from '../support/approvers.js';
import { examplesDir } from '../support/examples.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { openEngine } from '../support/open-engine.js';
import { parseArgs } from 'node:util';
import { withUsage } from '../support/parse-command-args.js';
import { readJsonInput } from '../support/read-input.js';
import { renderCards } from '../support/render-cards.js';
import { stylist, useColor } from '../support/style.js';
import { jsonText } from '../support/terminal-text.js';
import { UsageError } from '../support/usage-error.js';

export const RUN_HELP = `Usage: airlock run [transcript|-] --plugins <dir>... [options]

Executes the tool calls of a model message (OpenAI "tool_calls", Anthropic "tool_use",
OpenAI Responses "function_call" or Gemini "functionCall", detected automatically) and
prints the tool messages in the same provider format. The input may be one message, an
array of messages, or { "messages": [...] }; the last assistant message runs.
With no arguments at all, runs the bundled example.

Options:
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --json              print the machine-readable report: { messages, results }
  --format <kind>     "cards" (default on a terminal) or "messages" (default when piped)
  --approve <tool>    answer "ask" with yes for this tool (repeatable)
  --approve-all       answer every "ask" with yes
  --tenant <id>       run as this tenant (its own isolates; default "default")
  --capabilities <m>  an ES module whose default export names host functions plugins may be
                      granted ({ "kv.get": (arg, ctx) => ... }); your code, run in this process
  -h, --help          show this help

Tool failures are results, not a failing exit code. Exit codes: 0 ran, 2 bad usage or input.
On a terminal without --approve, you are asked; otherwise "ask" ends as APPROVAL_UNAVAILABLE.

Examples:
  airlock run
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
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${RUN_HELP}\n`);
    return 0;
  }
  if (positionals.length > 1) throw new UsageError(`run takes one transcript, got ${positionals.length} (see "airlock run --help")`);
  if (values.format !== undefined && values.format !== 'cards' && values.format !== 'messages') throw new UsageError('--format must be "cards" or "messages"');
  if (values.tenant !== undefined && !/^[\w.:@-]{1,128}$/.test(values.tenant)) throw new UsageError('--tenant must be 1-128 letters, digits or . _ : @ -');

  let source = positionals[0];
  let plugins = values.plugins ?? [];
  if (source === undefined && plugins.length === 0) {
    // The embedded default: the bundled example.
    const dir = examplesDir();
    source = join(dir, 'transcript.json');
    plugins = [join(dir, 'plugins')];
  }
  if (source === undefined) {
    if (process.stdin.isTTY) throw new UsageError('give a transcript file, or "-" to read one from standard input (see "airlock run --help")');
    source = '-';
  }

  const input = await readJsonInput(source);
  let detected;
  try {
    detected = detectToolCallMessage(input);
  } catch (error) {
    if (AirlockError.isInstance(error)) throw new UsageError(`${source === '-' ? 'standard input' : source}: ${error.message}`);
    throw error;
  }
  const format = PROVIDERS[detected.provider];
  const calls = format.parseCalls(detected.message);

  const interactive = process.stdin.isTTY === true && process.stderr.isTTY === true && source !== '-';
  const approver = approverFor({ approveAll: values['approve-all'] === true, approve: values.approve ?? [], interactive });
  const capabilities = await loadCapabilities(values.capabilities);
  const opened = await openEngine(plugins, { ...(approver === undefined ? {} : { approver }), capabilities });
  let results: ToolResult[];
  try {
    results = await opened.engine.run(calls, values.tenant === undefined ? {} : { tenant: values.tenant });
  } finally {
    await opened.close();
  }
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
      })),
    };
    process.stdout.write(`${jsonText(report)}\n`);
    return 0;
  }
  const cards = values.format === 'cards' || (values.format === undefined && process.stdout.isTTY === true);
  if (cards) {
    const views = calls.map((call, index) => ({ name: call.name, args: argumentsForDisplay(call), result: results[index]! }));
    process.stdout.write(renderCards(opened.engine, views, stylist(useColor(process.stdout))));
  } else {
    process.stdout.write(`${jsonText(messages)}\n`);
  }
  return 0;
}
