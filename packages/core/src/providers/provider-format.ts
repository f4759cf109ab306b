// One provider's wire format in both directions: tool list out, tool calls in,
// tool results back out as that provider's tool message.
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonValue } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';

export type ProviderId = 'openai' | 'responses' | 'anthropic' | 'gemini' | 'mcp';

/** A provider's tool call, normalized; arguments stay raw until the parse stage. */
export interface ToolCallRequest {
  readonly id: string;
  readonly name: string;
  /** A JSON string (OpenAI) or an already-decoded value (Anthropic, Gemini, MCP). */
  readonly arguments: string | JsonValue | undefined;
}

export interface ProviderFormat<Tool = unknown, Message = unknown> {
  readonly id: ProviderId;
  tools(schemas: readonly ToolSchema[]): Tool[];
  /** Tool calls of one model message; throws INVALID_PROVIDER_MESSAGE when it is not that shape. */
  parseCalls(message: unknown): ToolCallRequest[];
  /** The message(s) that carry results back, in the given (call) order. */
  toolMessages(results: readonly ToolResult[]): Message[];
}

/** How each format is named in messages a person reads. */
const PROVIDER_NAMES: Readonly<Record<ProviderId, string>> = {
  openai: 'an OpenAI Chat Completions',
  responses: 'an OpenAI Responses',
  anthropic: 'an Anthropic Messages',
  gemini: 'a Gemini',
  mcp: 'an MCP',
};

export function invalidMessage(provider: ProviderId, detail: string): AirlockError {
  return new AirlockError('INVALID_PROVIDER_MESSAGE', `not ${PROVIDER_NAMES[provider]} tool-call message: ${detail}`, { provider });
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function requireString(value: unknown, provider: ProviderId, where: string): string {
  if (value === undefined || value === null) throw invalidMessage(provider, `${where} is missing`);
  if (typeof value !== 'string') throw invalidMessage(provider, `${where} must be a string`);
  return value;
}

/**
 * One call's id or name as the message holds it. A malformed call is not a malformed message:
 * it reaches the pipeline as it is, which answers it (INVALID_ARGS, UNKNOWN_TOOL) beside the
 * calls that are well formed, so they still run and every call gets its result.
 */
export function callField(value: unknown): string {
  return value as string;
}
