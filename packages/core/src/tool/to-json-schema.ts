// Tools may be authored with zod or raw JSON Schema; everything downstream sees
// one frozen, lossless JSON Schema document.
import { z } from 'zod';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonObject, JsonSchema } from '../json/json-types.js';
import { snapshotJson } from '../json/snapshot-json.js';

export type SchemaInput = z.ZodType | JsonSchema;

export function isZodSchema(value: unknown): value is z.ZodType {
  return value instanceof z.ZodType;
}

/** Converts zod (input side) or snapshots raw JSON Schema; throws naming tool and field. */
export function toJsonSchema(input: unknown, toolName: string, field: 'parameters' | 'output'): JsonSchema {
  let raw: unknown = input;
  if (isZodSchema(input)) {
    try {
      const converted = z.toJSONSchema(input, { target: 'draft-2020-12', io: field === 'parameters' ? 'input' : 'output', unrepresentable: 'throw' }) as Record<string, unknown>;
      const { $schema: _dialect, ...rest } = converted;
      raw = rest;
    } catch (error) {
      throw new AirlockError('UNSUPPORTED_SCHEMA', `tool "${toolName}" ${field}: zod schema has no JSON Schema form (${(error as Error).message})`, { tool: toolName, field });
    }
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new AirlockError('UNSUPPORTED_SCHEMA', `tool "${toolName}" ${field} must be a zod schema or a JSON Schema object`, { tool: toolName, field });
  }
  const snapshot = snapshotJson(raw, { label: `tool "${toolName}" ${field}` }) as JsonObject;
  SNAPSHOTS.add(snapshot);
  return snapshot;
}

/** Schemas this module snapshotted: lossless JSON already, so projecting one needs only a copy. */
const SNAPSHOTS = new WeakSet<object>();

/** Whether `value` is a schema toJsonSchema made (a registered or defined tool's). */
export function isSnapshottedSchema(value: unknown): boolean {
  return typeof value === 'object' && value !== null && SNAPSHOTS.has(value);
}
