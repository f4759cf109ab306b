// Reading a plugin's capability argument: an object with the named fields, nothing else
// trusted. A refusal is an ordinary error; the plugin sees only a generic coded failure.
import { findControlCharacter, type JsonObject, type JsonValue } from '@airlock/core';

export class CapabilityRefusal extends Error {
  override readonly name = 'CapabilityRefusal';
}

export function argumentObject(argument: JsonValue, capability: string): JsonObject {
  if (argument === null || typeof argument !== 'object' || Array.isArray(argument)) throw new CapabilityRefusal(`${capability} takes an object`);
  return argument as JsonObject;
}

export function stringField(object: JsonObject, field: string, capability: string): string {
  const value = Object.hasOwn(object, field) ? object[field] : undefined;
  if (typeof value !== 'string') throw new CapabilityRefusal(`${capability}: ${field} must be a string`);
  return value;
}

export function optionalStringField(object: JsonObject, field: string, capability: string): string | undefined {
  return Object.hasOwn(object, field) && object[field] !== undefined ? stringField(object, field, capability) : undefined;
}

/** Whether a name holds a letter that changes how it reads or is matched without showing (core's one definition): never in a path or key. */
export function hasInvisible(text: string): boolean {
  return findControlCharacter(text) !== undefined;
}
