// What serve answers a stdio line the MCP SDK's transport could not read. JSON-RPC answers
// with the request's own id whenever one can be read: answered with id null, the client's
// request was never answered and it waited for ever.
import { JSONRPCRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { paramsProblem } from './mcp-params-problem.js';

export interface StdioRefusal {
  readonly id: string | number | null;
  readonly error: { readonly code: number; readonly message: string };
}

const NOT_JSON_RPC = 'Invalid Request: the message is not a JSON-RPC 2.0 request, notification or response';

/** The answer to a line the transport refused with `error`; undefined when the error is no refusal of a line. */
export function stdioRefusal(line: string | undefined, error: Error): StdioRefusal | undefined {
  if (error instanceof SyntaxError) return { id: null, error: { code: -32700, message: 'Parse error: the message is not JSON' } };
  if (error.name !== 'ZodError') return undefined;
  const message = line === undefined ? undefined : parsedObject(line);
  const id = message === undefined ? undefined : readableId(message);
  // No request whose id we can read: a response (its id is from our numbering) or a notification is never answered by id.
  if (message === undefined || id === undefined || typeof message.method !== 'string') return { id: null, error: { code: -32600, message: NOT_JSON_RPC } };
  if (message.jsonrpc !== '2.0') return { id, error: { code: -32600, message: 'Invalid Request: "jsonrpc" must be "2.0"' } };
  if (typeof id === 'number' && !Number.isInteger(id)) return { id, error: { code: -32600, message: 'Invalid Request: the id must be a string or an integer' } };
  const request = JSONRPCRequestSchema.safeParse(message);
  // The envelope is right: what breaks MCP's schema is in the params (their _meta, say).
  if (!request.success) return { id, error: { code: -32602, message: paramsProblem(message.method.length > 100 ? `${message.method.slice(0, 100)}…` : message.method, request.error) } };
  return { id, error: { code: -32600, message: NOT_JSON_RPC } };
}

function parsedObject(line: string): Record<string, unknown> | undefined {
  try {
    const value: unknown = JSON.parse(line);
    return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** A string id, or a number that reads back exactly (an integer past 2^53 was rounded: answered with it, the client would pair the answer with another request). */
function readableId(message: Record<string, unknown>): string | number | undefined {
  const { id } = message;
  if (typeof id === 'string') return id;
  if (typeof id === 'number' && Number.isFinite(id) && (!Number.isInteger(id) || Number.isSafeInteger(id))) return id;
  return undefined;
}
