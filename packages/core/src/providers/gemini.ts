// Gemini: function declarations with `parametersJsonSchema`, `functionCall` parts,
// `functionResponse` parts whose response holds `output` or `error`.
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import type { ToolResult } from '../result/tool-result.js';
import type { ToolSchema } from '../tool/schema-of.js';
import { invalidMessage, isRecord, requireId, requireString, type ProviderFormat, type ToolCallRequest } from './provider-format.js';

export interface GeminiFunctionDeclaration {
  name: string;
  description: string;
  parametersJsonSchema: JsonSchema;
}

export interface GeminiFunctionResponseContent {
  role: 'user';
  parts: { functionResponse: { id?: string; name: string; response: Record<string, JsonValue> } }[];
}

/** Gemini calls may lack ids; a stable synthetic one keeps results matched to calls. */
const syntheticId = (index: number): string => `gemini-call-${index}`;

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
        id: part.functionCall.id === undefined ? syntheticId(index) : requireId(part.functionCall.id, 'gemini', `functionCall[${index}].id`),
        name: requireString(part.functionCall.name, 'gemini', `functionCall[${index}].name`),
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
            if (!result.callId.startsWith('gemini-call-')) functionResponse.id = result.callId;
            return { functionResponse };
          }),
        }],
};
