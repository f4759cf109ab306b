// Freezes a tree in place. Only for values that are already plain JSON, such as
// JSON.parse output (acyclic, no accessors, no functions), whose depth is known to be bounded.
import type { JsonValue } from './json-types.js';

export function deepFreeze<T extends JsonValue>(value: T): T {
  if (value !== null && typeof value === 'object') {
    if (Array.isArray(value)) for (const item of value) deepFreeze(item as JsonValue);
    else for (const key of Object.keys(value)) deepFreeze((value as Record<string, JsonValue>)[key] as JsonValue);
    Object.freeze(value);
  }
  return value;
}
