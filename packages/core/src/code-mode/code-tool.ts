// The code tool (default `run_code`): the model writes one program that calls many tools.
// Core owns what the program may reach and how: which tools it is offered (declared in
// TypeScript in the description), each sub-call through the engine's whole pipeline, the
// caps on sub-calls, the value and the content the model reads. Running the program is the
// runner's job (the sandbox runs it in a fresh isolate realm); core never imports it.
import { AirlockError } from '../errors/airlock-error.js';
import { ToolCallError } from '../errors/tool-call-error.js';
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import type { Engine } from '../engine.js';
import type { ResultMetadata } from '../result/tool-result.js';
import { defineTool } from '../tool/define-tool.js';
import { valueIsShared } from '../tool/shared-output.js';
import type { AnyTool, ToolDefinition } from '../tool/tool-definition.js';
import { escapeControls, escapeControlsInJson } from '../util/visible-text.js';
import { codeModeDeclarations, type DeclaredTool } from './code-mode-declarations.js';
import { codeModeLimits, type CodeModeLimits } from './code-mode-limits.js';
import { SubCalls, type SubCallAnswer, type SubCallRecord } from './sub-calls.js';

export const DEFAULT_CODE_TOOL_NAME = 'run_code';

/** A console line of the program, as the value reports it. */
export interface CodeLogLine {
  readonly level: string;
  readonly message: string;
}

/** What a runner is handed for one program. */
export interface CodeRunRequest {
  /** The program as the model wrote it: JavaScript or TypeScript, the body of an async function. */
  readonly code: string;
  /** Unique per program run. */
  readonly callId: string;
  readonly tenant: string | undefined;
  /** Aborts when the program's call is cancelled; the runner must stop the program then. */
  readonly signal: AbortSignal;
  readonly limits: CodeModeLimits;
  /** The names the program's `tools` object holds: the tools this tenant is offered now. */
  readonly tools: readonly string[];
  /** The program's `tools.<name>(args)`: never rejects; a failure is an answer with a code. */
  readonly callTool: (name: unknown, args: unknown) => Promise<SubCallAnswer>;
  /** Accounting for the result's metadata (CPU, bytes, the console lines). */
  readonly setMetadata: (metadata: ResultMetadata) => void;
}

export interface CodeRunOutcome {
  /** The program's return value, as JSON. */
  readonly result: JsonValue;
  readonly logs: readonly CodeLogLine[];
}

/** Runs one program under its limits; throws ToolCallError with the code of what stopped it. */
export type CodeRunner = (request: CodeRunRequest) => Promise<CodeRunOutcome>;

export interface CodeToolOptions {
  /** The engine whose tools the program calls; each call walks its whole pipeline. */
  readonly engine: Engine;
  readonly runner: CodeRunner;
  /** Default `run_code`. */
  readonly name?: string;
  readonly limits?: Partial<CodeModeLimits>;
  /**
   * Whose tools the description declares (tools the policy denies this tenant outright are
   * left out), and the only tenant whose calls may run a program: a call of another tenant, or
   * of none, is refused. Without it the tool serves every tenant, each program as its call's.
   */
  readonly tenant?: string;
}

/** The value of a code tool's call. */
export interface CodeModeValue {
  readonly result: JsonValue;
  readonly logs: readonly CodeLogLine[];
  readonly calls: readonly SubCallRecord[];
}

/** Bytes of JSON the value's console lines may take (what the realm keeps is 16 KiB of text). */
const LOG_JSON_BYTES = 32 * 1024;

/** How long sub-calls cancelled at or past the program's deadline get to answer. */
const SETTLE_GRACE_MS = 50;

/** Console lines shown to the model after the result, and characters of each. */
const CONTENT_LOG_LINES = 20;
const CONTENT_LOG_LINE_CHARS = 200;

/** The tools a program of this tenant is offered: every tool of the engine but the code tool and those denied outright. */
export function codeModeTools(engine: Engine, tenant: string | undefined, codeToolName = DEFAULT_CODE_TOOL_NAME): DeclaredTool[] {
  return engine.schemas()
    .filter((schema) => schema.name !== codeToolName && !engine.deniesOutright(schema.name, tenant))
    .map((schema) => ({ name: schema.name, description: schema.description, parameters: schema.parameters, output: declaredResult(engine.registry.get(schema.name)?.definition) }));
}

/** What a program's call resolves to (see SubCalls): the value as declared, or the content's text. */
function declaredResult(definition: ToolDefinition | undefined): JsonSchema | undefined {
  return valueIsShared(definition) ? definition!.output : { type: 'string' };
}

/** The names of codeModeTools, without copying any schema: what each program's `tools` holds. */
function offeredNames(engine: Engine, tenant: string | undefined, codeToolName: string): string[] {
  return engine.registry.names().filter((name) => name !== codeToolName && !engine.deniesOutright(name, tenant));
}

/** The code tool's description: how to write a program, and the TypeScript of the tools it may call. */
export function codeToolDescription(tools: readonly DeclaredTool[], limits: CodeModeLimits): string {
  return [
    'Run a JavaScript or TypeScript program that calls tools and returns only what matters.',
    'The program is the body of an async function: use `await tools.<name>(args)`, run independent calls together with `Promise.all`, and `return` a JSON value (the result you will read).',
    `A failed call rejects with an error whose \`code\` and \`message\` say why; catch it to carry on. At most ${limits.maxCalls} tool calls per program, ${limits.maxCallsInFlight} at once; \`console.log\` lines are shown after the result. There is no network, file system, timer or import: only \`tools\`.`,
    '',
    '```ts',
    codeModeDeclarations(tools).trimEnd(),
    '```',
  ].join('\n');
}

/**
 * A code tool over `engine`: register it in an engine of its own (not in `engine`: a program
 * never starts another program). Throws AirlockError INVALID_OPTION naming a bad option.
 */
export function createCodeTool(options: CodeToolOptions): AnyTool {
  if (typeof options !== 'object' || options === null) throw new AirlockError('INVALID_OPTION', 'options must be an object', { path: 'options' });
  const { engine, runner } = options;
  if (typeof engine !== 'object' || engine === null || typeof engine.run !== 'function') throw new AirlockError('INVALID_OPTION', 'options.engine must be an engine (createEngine)', { path: 'options.engine' });
  if (typeof runner !== 'function') throw new AirlockError('INVALID_OPTION', 'options.runner must be a function', { path: 'options.runner' });
  const name = options.name ?? DEFAULT_CODE_TOOL_NAME;
  const limits = codeModeLimits(options.limits);
  const offered = codeModeTools(engine, options.tenant, name);
  return defineTool({
    name,
    description: codeToolDescription(offered, limits),
    parameters: {
      type: 'object',
      properties: { code: { type: 'string', minLength: 1, maxLength: limits.maxCodeChars, description: 'The program: the body of an async function that calls `tools` and returns a JSON value.' } },
      required: ['code'],
      additionalProperties: false,
    },
    // The program's result is bounded by limits.maxOutputBytes in its isolate; its logs (fitLogs) and call list ride along.
    maxOutputBytes: limits.maxOutputBytes + LOG_JSON_BYTES + 1024 + limits.maxCalls * 256,
    projectContent: (_args, value) => contentOf(value as unknown as CodeModeValue, limits.maxOutputBytes),
    execute: async (args: JsonObject, exec): Promise<JsonValue> => {
      // Made for one tenant, it never runs a program as another: an embedder who forgot the
      // call's tenant would otherwise run that tenant's programs as the default one.
      if (options.tenant !== undefined && exec.tenant !== options.tenant) throw new ToolCallError('TOOL_ERROR', escapeControls(`${name}: made for tenant ${JSON.stringify(options.tenant)}, called for ${exec.tenant === undefined ? 'no tenant' : `tenant ${JSON.stringify(exec.tenant)}`}; pass the same tenant to the engine's run`));
      // The program's wall-clock deadline bounds the whole call, its sub-calls' settling included.
      const deadline = performance.now() + limits.timeoutMs;
      const tools = offeredNames(engine, exec.tenant, name);
      const subCalls = new SubCalls({ run: engine.run, tenant: exec.tenant, signal: exec.signal, limits, idPrefix: `${exec.callId}/${name}`, offered: new Set(tools), sharesValue: (tool) => valueIsShared(engine.registry.get(tool)?.definition) });
      let metadata: ResultMetadata = {};
      let outcome: CodeRunOutcome;
      try {
        outcome = await runner({
          code: args.code as string,
          callId: exec.callId,
          tenant: exec.tenant,
          signal: exec.signal,
          limits,
          tools,
          callTool: (tool, toolArgs) => subCalls.call(tool, toolArgs),
          setMetadata: (next) => {
            metadata = { ...metadata, ...next };
          },
        });
      } catch (error) {
        // The message may carry what the program threw: escaped, so it cannot drive the client's terminal.
        if (ToolCallError.isInstance(error)) throw new ToolCallError(error.code, escapeControls(error.message.startsWith(`${name}: `) ? error.message : `${name}: ${error.message}`));
        throw error;
      } finally {
        // No sub-call outlives the program unseen: those still running are cancelled and waited
        // for, up to the program's deadline (a trusted tool may ignore its signal). A program
        // stopped at its deadline still gives them a moment to answer their cancellation.
        await subCalls.close(Math.max(deadline, performance.now() + SETTLE_GRACE_MS));
        // The sub-calls are in the metadata too, so a program stopped by a limit still says what it
        // called; and what their tools logged joins the program's lines, for the operator alone.
        exec.setMetadata({ ...metadata, ...withSubCallLogs(metadata, subCalls.logs()), calls: subCalls.records() as unknown as JsonValue });
      }
      const value: CodeModeValue = { result: outcome.result, logs: fitLogs(outcome.logs), calls: subCalls.records() };
      return value as unknown as JsonValue;
    },
  });
}

/**
 * The console lines as the value carries them: at most LOG_JSON_BYTES of JSON. The realm keeps
 * 16 KiB of text, but JSON writes a control character as six (\u0001): 16 KiB of them made a
 * program that kept within its own limits fail OUTPUT_TOO_LARGE (an outside tester's find).
 * Lines past the allowance are dropped, and a last line says how many.
 */
function fitLogs(lines: readonly CodeLogLine[]): readonly CodeLogLine[] {
  let bytes = 2;
  for (let index = 0; index < lines.length; index += 1) {
    bytes += Buffer.byteLength(JSON.stringify(lines[index]), 'utf8') + 1;
    if (bytes > LOG_JSON_BYTES) return [...lines.slice(0, index), { level: 'warn', message: `(${lines.length - index} more console lines not kept: the log is limited to ${LOG_JSON_BYTES} bytes of JSON)` }];
  }
  return lines;
}

/** The program's log lines followed by its sub-calls' tools' lines, and how many were dropped in all. */
function withSubCallLogs(metadata: ResultMetadata, sub: ReturnType<SubCalls['logs']>): ResultMetadata {
  if (sub.lines.length === 0 && sub.dropped === 0) return {};
  const own = Array.isArray(metadata.logs) ? metadata.logs : [];
  const dropped = (typeof metadata.logsDropped === 'number' ? metadata.logsDropped : 0) + sub.dropped;
  return { logs: [...own, ...sub.lines] as unknown as JsonValue, ...(dropped > 0 ? { logsDropped: dropped } : {}) };
}

/**
 * The result's JSON, then a short log: what the model reads, within the output limit. The
 * program wrote both: controls, bidi and invisible characters are escaped (the JSON stays
 * the same JSON), so they cannot drive a client's terminal or hide text from a reader.
 */
function contentOf(value: CodeModeValue, maxBytes: number): string {
  const result = escapeControlsInJson(JSON.stringify(value.result) ?? 'null');
  if (value.logs.length === 0) return result;
  const lines = value.logs.slice(0, CONTENT_LOG_LINES).map((line) => {
    const message = escapeControls(line.message);
    return `${escapeControls(line.level)}: ${message.length > CONTENT_LOG_LINE_CHARS ? `${message.slice(0, CONTENT_LOG_LINE_CHARS)}…` : message}`;
  });
  if (value.logs.length > CONTENT_LOG_LINES) lines.push(`(${value.logs.length - CONTENT_LOG_LINES} more console lines)`);
  const log = `\n\nconsole:\n${lines.join('\n')}`;
  return Buffer.byteLength(result, 'utf8') + Buffer.byteLength(log, 'utf8') <= maxBytes ? result + log : `${result}\n\n(${value.logs.length} console lines not shown: the result fills the output limit)`;
}
