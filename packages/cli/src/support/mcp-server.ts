// One MCP server session over the sandbox: tools/list is the allowlisted projection
// (plus outputSchema), tools/call walks the full pipeline. Failures are isError results,
// never JSON-RPC errors; `ask` goes to the client through elicitation when it can answer.
// What a call's plugin logged (its console and the log capability) reaches the client as
// logging notifications on that call's own request, at or above the level it set.
import { createEngine, failureContent, mcpCallToolResult, sharedOutputSchema, type Approver, type Engine, type JsonValue, type PipelineObservers, type ToolRegistry, type ToolResult } from '@airlock/core';
import type { Sandbox } from '@airlock/sandbox';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { Protocol } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { elicitationMessage } from './approval-prompt.js';
import { visible } from './terminal-text.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, LoggingLevelSchema, McpError, SetLevelRequestSchema, type CallToolResult, type LoggingLevel, type RequestId, type ServerNotification, type Tool } from '@modelcontextprotocol/sdk/types.js';
import { logName } from './log-name.js';
import { codeModeOver } from './open-engine.js';
import { paramsProblem } from './mcp-params-problem.js';
import { roundedIntegerIn, roundedIntegerWords } from './rounded-integers.js';
import type { RoundedRequests } from './rounded-requests.js';
import { z } from 'zod';

/** tools/call, its params checked here (see createMcpSession). */
const CALL_TOOL_METHOD = z.object({ method: z.literal('tools/call'), params: z.unknown().optional() });
/** logging/setLevel, its params checked here: the protocol's own check answered a bad level -32603 with a raw zod dump. */
const SET_LEVEL_METHOD = z.object({ method: z.literal('logging/setLevel'), params: z.unknown().optional() });

/** The tools/call requests sessions are answering: serving over stdio waits for them once input ends. */
export class CallsInFlight {
  #count = 0;
  #waiting: (() => void)[] = [];

  start(): void {
    this.#count += 1;
  }

  end(): void {
    this.#count -= 1;
    if (this.#count === 0) for (const resolve of this.#waiting.splice(0)) resolve();
  }

  /** Resolves once no call is being answered. */
  drained(): Promise<void> {
    return this.#count === 0 ? Promise.resolve() : new Promise((resolve) => this.#waiting.push(resolve));
  }
}

export interface McpSessionOptions {
  readonly sandbox: Sandbox;
  /** The sandbox's tools, registered (schemas compiled) once and shared by every session. */
  readonly registry: ToolRegistry;
  readonly tenant: string;
  readonly version: string;
  readonly approve: ReadonlySet<string>;
  readonly approveAll: boolean;
  /** Serve one tool, run_code, whose programs call the sandbox's tools (each through this session's gate). */
  readonly codeMode?: boolean;
  readonly log: (line: string) => void;
  /** --debug: failures the engine contained, for the operator. */
  readonly onError?: PipelineObservers['onError'];
  /** Counts this session's calls while they are answered. */
  readonly calls?: CallsInFlight;
  /** Aborts when the client is gone (stdio: it closed our input): a question still open can no longer be answered. */
  readonly clientGone?: AbortSignal;
  /** Aborts when the server is stopping (SIGTERM, Ctrl-C): calls in progress are cancelled, and answered, before it closes. */
  readonly stopping?: AbortSignal;
  /** The integers JSON.parse rounded in each tools/call's text, noted by the transport's reader before the SDK parsed it. */
  readonly rounded?: RoundedRequests;
}

/**
 * The SDK rejects a client's answer that is no elicitation result with zod's whole report, a
 * JSON dump over many lines that would reach the model: said in one line instead.
 */
function malformedAnswer(error: unknown): Error | undefined {
  const issues = (error as { issues?: unknown } | null)?.issues;
  if (!(error instanceof Error) || !/^\$?ZodError$/.test(error.name) || !Array.isArray(issues)) return undefined;
  const said = (issues as { path?: unknown; message?: unknown }[]).slice(0, 3).map((issue) => `${Array.isArray(issue.path) && issue.path.length > 0 ? issue.path.join('.') : 'the result'}: ${String(issue.message)}`);
  return new Error(`the client's answer is not an elicitation result (${said.join('; ')})`);
}

export function createMcpSession(options: McpSessionOptions): Server {
  const server = new Server({ name: 'airlock', version: options.version }, { capabilities: { tools: {}, logging: {} } });
  // One server per session, so the level logging/setLevel sets is this session's alone.
  let minimum: LoggingLevel = 'debug';
  server.setRequestHandler(SET_LEVEL_METHOD, (loose) => {
    const request = SetLevelRequestSchema.safeParse(loose);
    if (!request.success) throw new McpError(ErrorCode.InvalidParams, `logging/setLevel: params.level must be one of ${LoggingLevelSchema.options.join(', ')}`);
    minimum = request.data.params.level;
    return {};
  });
  // The tools/call request each running call came in on, by call id: an elicitation rides on
  // that request's own response stream. Sent without it, Streamable HTTP puts it on the
  // standalone stream, which the client may not have opened yet: the question was lost and
  // the call waited for an answer that never came.
  const callRequests = new Map<string, RequestId>();
  // The engine's call ids are this session's own: a client's request ids 1 and "1" would be
  // one call id, and whichever call ended first took the other's request away.
  let callsStarted = 0;
  // A Code Mode program's sub-calls are named "<call id>/run_code.<n>": they ask on the program's request.
  const relatedRequest = (callId: string): RequestId | undefined => callRequests.get(callId) ?? callRequests.get(callId.slice(0, Math.max(0, callId.lastIndexOf('/'))));

  const approver: Approver = async (request, signal) => {
    if (options.approveAll || options.approve.has(request.toolName)) return true;
    if (server.getClientCapabilities()?.elicitation === undefined) throw new Error('the MCP client does not support elicitation');
    // The question is withdrawn (notifications/cancelled) only while it waits: the engine ends
    // the approval's signal once answered too, and MCP cancels only requests in progress.
    const asking = new AbortController();
    const withdraw = (): void => asking.abort();
    const watched = options.clientGone === undefined ? [signal] : [signal, options.clientGone];
    for (const watchedSignal of watched) {
      if (watchedSignal.aborted) withdraw();
      else watchedSignal.addEventListener('abort', withdraw, { once: true });
    }
    try {
      const answer = await server.elicitInput(
        {
          // Escaped like the terminal's prompt, and nothing cut without saying so.
          message: elicitationMessage(request),
          requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve this call' } }, required: ['approve'] },
        },
        { signal: asking.signal, ...(relatedRequest(request.callId) === undefined ? {} : { relatedRequestId: relatedRequest(request.callId) }) },
      ).catch((error: unknown) => {
        throw malformedAnswer(error) ?? error;
      });
      return answer.action === 'accept' && answer.content?.approve === true;
    } finally {
      for (const watchedSignal of watched) watchedSignal.removeEventListener('abort', withdraw);
    }
  };

  const tools = createEngine({
    registry: options.registry,
    policy: { default: 'deny', rules: options.sandbox.policyRules() },
    preSchedule: options.sandbox.preSchedule,
    approver,
    observers: {
      // A cancelled call is answered at once; when its sandboxed body is stopped, the operator sees it.
      onLateSettlement: ({ toolName, outcome }) => options.log(`${logName(options.tenant)} ${logName(toolName)} stopped after it was answered (${outcome})`),
      ...(options.onError === undefined ? {} : { onError: options.onError }),
    },
  });
  const engine: Engine = options.codeMode === true
    ? createEngine({ tools: [codeModeOver(tools, options.sandbox).tool({ tenant: options.tenant })], policy: { default: 'allow' } })
    : tools;

  // MCP's lifecycle: nothing but ping before initialize (the SDK's server would serve it all).
  const initialized = (): void => {
    if (server.getClientVersion() === undefined) throw new McpError(ErrorCode.InvalidRequest, 'the session is not initialized: send initialize first');
  };

  server.setRequestHandler(ListToolsRequestSchema, () => {
    initialized();
    // Not the tools this tenant may never call: the same list an unknown tool's answer names.
    return { tools: engine.tools('mcp', { tenant: options.tenant }) as Tool[] };
  });

  // Registered with a schema that only names the method: parsed against the full schema by the
  // protocol, a request breaking it (arguments that are not an object) was answered -32603 (an
  // internal error). And registered past the SDK server's own override, whose check of the
  // params answered -32602 with a raw multi-line zod dump: this handler checks them itself.
  Protocol.prototype.setRequestHandler.call(server, CALL_TOOL_METHOD, async (loose, extra): Promise<CallToolResult> => {
    // Taken first, so a refused request leaves nothing behind for a later one with its id.
    const rounded = options.rounded?.take(extra.requestId);
    const checked = CallToolRequestSchema.safeParse(loose);
    if (!checked.success) throw new McpError(ErrorCode.InvalidParams, paramsProblem('tools/call', checked.error));
    // The request as it came, not zod's copy of it: the pipeline checks the arguments' own keys.
    const request = loose as unknown as z.infer<typeof CallToolRequestSchema>;
    initialized();
    // The SDK parsed the arguments: an integer past 2^53 in them was rounded, and the tool would get a neighbour.
    const inexact = rounded === undefined ? undefined : roundedIntegerIn(request.params.arguments, rounded);
    if (inexact !== undefined) {
      const message = `the arguments hold ${roundedIntegerWords(inexact)}`;
      options.log(`${logName(options.tenant)} ${logName(request.params.name)} → INVALID_ARGS (an integer JSON cannot carry exactly)`);
      return { content: [{ type: 'text', text: failureContent('INVALID_ARGS', message) }], isError: true };
    }
    options.calls?.start();
    try {
      options.log(`${logName(options.tenant)} ${logName(request.params.name)} started`);
      callsStarted += 1;
      const callId = `call-${callsStarted}`;
      callRequests.set(callId, extra.requestId);
      let result;
      // The client's cancellation, or the server stopping: either cancels the call.
      const cancel = new AbortController();
      const onCancel = (): void => cancel.abort();
      const watched = options.stopping === undefined ? [extra.signal] : [extra.signal, options.stopping];
      for (const signal of watched) {
        if (signal.aborted) cancel.abort();
        else signal.addEventListener('abort', onCancel, { once: true });
      }
      try {
        [result] = await engine.run(
          [{ id: callId, name: request.params.name, arguments: (request.params.arguments ?? {}) as JsonValue }],
          { signal: cancel.signal, tenant: options.tenant },
        );
      } finally {
        callRequests.delete(callId);
        for (const signal of watched) signal.removeEventListener('abort', onCancel);
      }
      options.log(`${logName(options.tenant)} ${logName(request.params.name)} → ${result!.isError ? result!.error.code : 'ok'} (${result!.durationMs.toFixed(1)} ms)`);
      // Before the result: on Streamable HTTP the call's stream closes with its response.
      for (const notification of callLogNotifications(result!, minimum)) await extra.sendNotification(notification);
      return mcpCallToolResult(result!, sharedOutputSchema(engine.registry.get(result!.name)?.definition)) as CallToolResult;
    } finally {
      options.calls?.end();
    }
  });

  return server;
}

/** MCP's levels in rising severity; a plugin's "warn" is MCP's "warning". */
const SEVERITY: readonly LoggingLevel[] = ['debug', 'info', 'notice', 'warning', 'error', 'critical', 'alert', 'emergency'];
const MCP_LEVEL: Readonly<Record<string, LoggingLevel>> = { debug: 'debug', info: 'info', warn: 'warning', error: 'error' };

/** A call's log lines as notifications/message, in the order the plugin wrote them, at or above `minimum`. */
export function callLogNotifications(result: ToolResult, minimum: LoggingLevel): ServerNotification[] {
  const lines = Array.isArray(result.metadata?.logs) ? result.metadata.logs : [];
  const dropped = result.metadata?.logsDropped;
  const entries: { level: LoggingLevel; message: string }[] = [];
  for (const line of lines) {
    const { level, message } = (line ?? {}) as { level?: unknown; message?: unknown };
    const mapped = typeof level === 'string' && Object.hasOwn(MCP_LEVEL, level) ? MCP_LEVEL[level] : undefined;
    // The plugin (or program) wrote it: escaped, so it cannot drive the client's terminal or hide text.
    if (mapped !== undefined && typeof message === 'string') entries.push({ level: mapped, message: visible(message) });
  }
  if (typeof dropped === 'number' && dropped > 0) entries.push({ level: 'warning', message: `${dropped} more log lines dropped (the per-call bound)` });
  const floor = SEVERITY.indexOf(minimum);
  return entries
    .filter((entry) => SEVERITY.indexOf(entry.level) >= floor)
    .map((entry) => ({ method: 'notifications/message', params: { level: entry.level, logger: result.name, data: entry.message } }));
}
