// A mutable deep copy of JSON that is already known to be lossless (a snapshot).
import type { JsonValue } from './json-types.js';

export function cloneJson<T extends JsonValue>(value: T): T {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: JsonValue) => cloneJson(item)) as unknown as T;
  const out: Record<string, JsonValue> = {};
  for (const key of Object.keys(value)) {
    Object.defineProperty(out, key, { value: cloneJson((value as Record<string, JsonValue>)[key] as JsonValue), enumerable: true, writable: true, configurable: true });
  }
  return out as T;
}
