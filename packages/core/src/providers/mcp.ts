// MCP: `tools/list` entries, `tools/call` params, and CallToolResult replies.
import { cloneJson } from '../json/clone-json.js';
import type { JsonObject, JsonSchema } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { invalidMessage, isRecord, requireString, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface McpTool {
  name: string;
  description: string;
  inputSchema: JsonSchema & { type: 'object' };
  outputSchema?: JsonSchema & { type: 'object' };
}

export interface McpCallToolResult {
  content: { type: 'text'; text: string }[];
  isError: boolean;
  structuredContent?: JsonObject;
}

let nextMcpId = 0;

export const mcp: ProviderFormat<McpTool, McpCallToolResult> = {
  id: 'mcp',
  tools: (schemas: readonly ToolSchema[]) =>
    schemas.map((schema) => ({ name: schema.name, description: schema.description, inputSchema: schema.parameters as McpTool['inputSchema'] })),
  /** Accepts `tools/call` params (`{ name, arguments }`) or a JSON-RPC request carrying them. */
  parseCalls(message: unknown): ToolCallRequest[] {
    const params = isRecord(message) && isRecord(message.params) ? message.params : message;
    if (!isRecord(params)) throw invalidMessage('mcp', 'expected tools/call params { name, arguments }');
    const id = isRecord(message) && (typeof message.id === 'string' || typeof message.id === 'number') ? String(message.id) : `mcp-call-${(nextMcpId += 1)}`;
    return [{ id, name: requireString(params.name, 'mcp', 'params.name'), arguments: (params.arguments ?? {}) as ToolCallRequest['arguments'] }];
  },
  toolMessages: (results: readonly ToolResult[]) => results.map((result) => mcpCallToolResult(result, undefined)),
};

/**
 * One CallToolResult. `structuredContent` only when the tool declares an object-rooted
 * output schema: that is the schema MCP clients validate it against.
 */
export function mcpCallToolResult(result: ToolResult, output: JsonSchema | undefined): McpCallToolResult {
  const reply: McpCallToolResult = { content: [{ type: 'text', text: result.content }], isError: result.isError };
  if (!result.isError && output?.type === 'object' && isRecord(result.value)) reply.structuredContent = cloneJson(result.value as JsonObject);
  return reply;
}

/**
 * The MCP projection plus `outputSchema` for tools that declare an object-rooted output:
 * MCP clients validate `structuredContent` against it, so this one host-only field is shared on purpose.
 */
export function mcpToolsWithOutput(entries: readonly { schema: ToolSchema; output: JsonSchema | undefined }[]): McpTool[] {
  return entries.map(({ schema, output }) => {
    const [tool] = mcp.tools([schema]) as [McpTool];
    if (output !== undefined && output.type === 'object') tool.outputSchema = cloneJson(output) as McpTool['outputSchema'] & object;
    return tool;
  });
}
