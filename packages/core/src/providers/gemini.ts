// Gemini: function declarations with `parametersJsonSchema`, `functionCall` parts,
// `functionResponse` parts whose response holds `output` or `error`.
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { callField, invalidMessage, isRecord, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema: JsonSchema;
}

export interface GeminiFunctionResponseContent {
  role: 'user';
  parts: { functionResponse: { id?: string; name: string; response: Record<string, JsonValue> } }[];
}

/**
 * Gemini calls may lack ids; a stand-in keeps results matched to calls, and is left out of
 * the function response (the model sent none). Its random part is this process's: a model
 * never sees a stand-in (it is not echoed), so no id a model sends can be one, collide
 * with one, or lose its echo for looking like one.
 */
const STAND_IN_PREFIX = `gemini-call-${globalThis.crypto.randomUUID().slice(0, 8)}-`;
const standInId = (index: number): string => `${STAND_IN_PREFIX}${index}`;
const isStandIn = (id: string): boolean => id.startsWith(STAND_IN_PREFIX) && /^\d+$/.test(id.slice(STAND_IN_PREFIX.length));

export const gemini: ProviderFormat<GeminiFunctionDeclaration, GeminiFunctionResponseContent> = {
  id: 'gemini',
  tools: (schemas: readonly ToolSchema[]) =>
    schemas.map((schema) => ({ name: schema.name, description: schema.description, parametersJsonSchema: schema.parameters })),
  parseCalls(message: unknown): ToolCallRequest[] {
    const parts = isRecord(message) ? message.parts : undefined;
    if (!Array.isArray(parts)) throw invalidMessage('gemini', 'expected a model content with a "parts" array');
    return parts
      .filter((part): part is { functionCall: Record<string, unknown> } => isRecord(part) && isRecord(part.functionCall))
      .map((part, index) => ({
        id: part.functionCall.id === undefined ? standInId(index) : callField(part.functionCall.id),
        name: callField(part.functionCall.name),
        arguments: (part.functionCall.args ?? {}) as ToolCallRequest['arguments'],
      }));
  },
  toolMessages: (results: readonly ToolResult[]) =>
    results.length === 0
      ? []
      : [{
          role: 'user',
          parts: results.map((result) => {
            const response: Record<string, JsonValue> = result.isError
              ? { error: { code: result.error.code, message: result.content } as JsonObject }
              : { output: result.content };
            const functionResponse: GeminiFunctionResponseContent['parts'][number]['functionResponse'] = { name: result.name, response };
            if (!isStandIn(result.callId)) functionResponse.id = result.callId;
            return { functionResponse };
          }),
        }],
};
