// Freezes JSON.parse output in place and finds the first number JSON.parse could not keep:
// a literal like 1e400 parses to Infinity, which passes `{ "type": "integer" }` in ajv and
// then reaches the tool as null; one past 2^53 is rounded (the caller says which values
// those are). It also finds the first key named "__proto__": JSON.parse makes it an own
// property, which permission rules and validation read as data, but a tool that copies its
// arguments (Object.assign, a for-in loop) takes as the copy's prototype, so a path rule
// saw no `path` while the tool read one. Only for acyclic, plain, depth-bounded JSON.
import type { JsonValue } from './json-types.js';

export interface UnkeptNumber {
  /** Its JSON path ("(the root)" for a bare number). */
  readonly path: string;
  readonly value: number;
}

/** A key named "__proto__", at this JSON path (of the object holding it). */
export interface PrototypeKey {
  readonly path: string;
  readonly prototypeKey: true;
}

/** The first number that is not finite or is one of `rounded`, or key "__proto__"; undefined when there is none. */
export function freezeParsedJson(value: JsonValue, rounded: ReadonlyMap<number, string> = new Map(), path = ''): UnkeptNumber | PrototypeKey | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && !rounded.has(value) ? undefined : { path: path === '' ? '(the root)' : path, value };
  if (value === null || typeof value !== 'object') return undefined;
  let bad: UnkeptNumber | PrototypeKey | undefined;
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length && bad === undefined; index += 1) bad = freezeParsedJson(value[index] as JsonValue, rounded, `${path}[${index}]`);
  } else {
    for (const key of Object.keys(value)) {
      if (key === '__proto__') {
        bad = { path: path === '' ? '(the root)' : path, prototypeKey: true };
        break;
      }
      bad = freezeParsedJson((value as Record<string, JsonValue>)[key] as JsonValue, rounded, path === '' ? key : `${path}.${key}`);
      if (bad !== undefined) break;
    }
  }
  Object.freeze(value);
  return bad;
}
