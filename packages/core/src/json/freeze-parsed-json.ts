// Freezes JSON.parse output in place and finds the first number JSON.parse could not keep:
// a literal like 1e400 parses to Infinity, which passes `{ "type": "integer" }` in ajv and
// then reaches the tool as null. Only for JSON.parse output (acyclic, plain, depth bounded).
import type { JsonValue } from './json-types.js';

/** The JSON path of the first non-finite number, or undefined when every number is finite. */
export function freezeParsedJson(value: JsonValue, path = ''): string | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? undefined : path === '' ? '(the root)' : path;
  if (value === null || typeof value !== 'object') return undefined;
  let bad: string | undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && bad === undefined; index += 1) bad = freezeParsedJson(value[index] as JsonValue, `${path}[${index}]`);
  } else {
    for (const key of Object.keys(value)) {
      bad = freezeParsedJson((value as Record<string, JsonValue>)[key] as JsonValue, path === '' ? key : `${path}.${key}`);
      if (bad !== undefined) break;
    }
  }
  Object.freeze(value);
  return bad;
}
