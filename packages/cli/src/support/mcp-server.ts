// One MCP server session over the sandbox: tools/list is the allowlisted projection
// (plus outputSchema), tools/call walks the full pipeline. Failures are isError results,
// never JSON-RPC errors; `ask` goes to the client through elicitation when it can answer.
import { createEngine, mcpCallToolResult, type Approver, type Engine, type JsonValue, type ToolRegistry } from '@airlock/core';
import { createCodeMode, type Sandbox } from '@airlock/sandbox';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type RequestId, type Tool } from '@modelcontextprotocol/sdk/types.js';

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
}

export function createMcpSession(options: McpSessionOptions): Server {
  const server = new Server({ name: 'airlock', version: options.version }, { capabilities: { tools: {} } });
  // The tools/call request each running call came in on, by call id: an elicitation rides on
  // that request's own response stream. Sent without it, Streamable HTTP puts it on the
  // standalone stream, which the client may not have opened yet: the question was lost and
  // the call waited for an answer that never came.
  const callRequests = new Map<string, RequestId>();
  // A Code Mode program's sub-calls are named "<call id>/run_code.<n>": they ask on the program's request.
  const relatedRequest = (callId: string): RequestId | undefined => callRequests.get(callId) ?? callRequests.get(callId.slice(0, Math.max(0, callId.lastIndexOf('/'))));

  const approver: Approver = async (request, signal) => {
    if (options.approveAll || options.approve.has(request.toolName)) return true;
    if (server.getClientCapabilities()?.elicitation === undefined) throw new Error('the MCP client does not support elicitation');
    const args = JSON.stringify(request.args);
    const answer = await server.elicitInput(
      {
        message: `Allow ${request.toolName}(${args.length > 300 ? `${args.slice(0, 300)}…` : args})? Approval needed: ${request.reason}.`,
        requestedSchema: { type: 'object', properties: { approve: { type: 'boolean', title: 'Approve this call' } }, required: ['approve'] },
      },
      { signal, ...(relatedRequest(request.callId) === undefined ? {} : { relatedRequestId: relatedRequest(request.callId) }) },
    );
    return answer.action === 'accept' && answer.content?.approve === true;
  };

  const tools = createEngine({
    registry: options.registry,
    policy: { default: 'deny', rules: options.sandbox.policyRules() },
    preSchedule: options.sandbox.preSchedule,
    approver,
  });
  const engine: Engine = options.codeMode === true
    ? createEngine({ tools: [createCodeMode({ engine: tools, sandbox: options.sandbox }).tool({ tenant: options.tenant })], policy: { default: 'allow' } })
    : tools;

  server.setRequestHandler(ListToolsRequestSchema, () => ({
    tools: engine.tools('mcp') as Tool[],
  }));

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    options.log(`${options.tenant} ${request.params.name} started`);
    const callId = String(extra.requestId);
    callRequests.set(callId, extra.requestId);
    let result;
    try {
      [result] = await engine.run(
        [{ id: callId, name: request.params.name, arguments: (request.params.arguments ?? {}) as JsonValue }],
        { signal: extra.signal, tenant: options.tenant },
      );
    } finally {
      callRequests.delete(callId);
    }
    options.log(`${options.tenant} ${request.params.name} → ${result!.isError ? result!.error.code : 'ok'} (${result!.durationMs.toFixed(1)} ms)`);
    return mcpCallToolResult(result!, engine.registry.get(result!.name)?.definition.output) as CallToolResult;
  });

  return server;
}
