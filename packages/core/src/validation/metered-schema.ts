// Copies a plugin schema with the meter keyword in every object ajv could compile as a
// subschema, so every application is charged. `enum`, `const` and `dependentRequired` hold
// data and stay as they are; a `$ref` whose JSON pointer lands there (or on any unmetered spot) is refused,
// since ajv would compile that spot as an unmetered schema. Patterns are compiled here
// first, so a pattern the linear engine refuses is reported with its schema path.
import type { JsonSchema, JsonValue } from '../json/json-types.js';
import { patternInstructions } from './linear-regexp.js';

export const METER_KEYWORD = 'airlock:meter';

const SUBSCHEMA_MAP = new Set(['properties', 'patternProperties', '$defs', 'definitions', 'dependentSchemas', 'dependencies']);
/** Keywords whose values are data, never compiled as schemas: `dependentRequired` maps names to arrays of names. */
const DATA = new Set(['enum', 'const', 'dependentRequired']);
const REFS = ['$ref', '$dynamicRef', '$recursiveRef'];

/**
 * ajv compiles about a millisecond's worth of code per subschema, on the host's thread at
 * load (20,000 properties took 20 s): bigger schemas are refused. Tool schemas that
 * models use run to tens or hundreds of subschemas.
 */
export const MAX_SUBSCHEMAS = 1000;

/** Instructions all of a schema's patterns may compile to together: about 35 ms of compiling at load. */
export const MAX_SCHEMA_PATTERN_INSTRUCTIONS = 50_000;
/** Characters all of a schema's patterns may have together: about 30 ms of parsing at load. */
export const MAX_SCHEMA_PATTERN_CHARS = 100_000;

type Json = JsonValue;
interface RefSite {
  readonly ref: string;
  readonly path: string;
}

/** Thrown with the schema path of the offending spot; compile-validator adds the tool and field. */
export class RefusedSchema extends Error {}

function escapePointer(segment: string): string {
  return segment.replace(/~/g, '~0').replace(/\//g, '~1');
}

export function meteredCopy(schema: JsonSchema): JsonSchema {
  const metered = new WeakSet<object>();
  const resources: Json[] = [];
  const refs: RefSite[] = [];
  let subschemas = 0;
  let instructions = 0;
  let patternChars = 0;

  // Every object is copied as a schema, unknown keywords' values included: a `$ref` may
  // point at any of them, and metering one that is never compiled costs nothing.
  function copy(value: Json, path: string): Json {
    if (Array.isArray(value)) return value.map((item, index) => copy(item, `${path}/${index}`));
    if (value === null || typeof value !== 'object') return value;
    const record = value as Readonly<Record<string, Json>>;
    const out: Record<string, Json> = {};
    for (const [key, child] of Object.entries(record)) {
      const at = `${path}/${escapePointer(key)}`;
      if (key === 'pattern' && typeof child === 'string') checkPattern(child, at);
      if (key === 'patternProperties' && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        for (const name of Object.keys(child)) checkPattern(name, `${at}/${escapePointer(name)}`);
      }
      if (DATA.has(key)) out[key] = child;
      else if (SUBSCHEMA_MAP.has(key) && child !== null && typeof child === 'object' && !Array.isArray(child)) {
        // ajv never applies a subschema under "__proto__" (it would accept anything there): refused, not ignored.
        if (key === 'properties' && Object.hasOwn(child, '__proto__')) throw new RefusedSchema(`${at}/__proto__: a property named "__proto__" cannot be checked by the validator; give it another name`);
        out[key] = Object.fromEntries(Object.entries(child).map(([name, sub]) => [name, copy(sub, `${at}/${escapePointer(name)}`)]));
      } else out[key] = copy(child, at);
    }
    for (const key of REFS) if (typeof record[key] === 'string') refs.push({ ref: record[key], path: `${path}/${key}` });
    out[METER_KEYWORD] = true;
    metered.add(out);
    if ((subschemas += 1) > MAX_SUBSCHEMAS) throw new RefusedSchema(`${path || '/'}: the schema has more than ${MAX_SUBSCHEMAS} subschemas (objects); split the tool or simplify its schema`);
    if (typeof record.$id === 'string' || path === '') resources.push(out);
    return out;
  }

  function checkPattern(pattern: string, path: string): void {
    try {
      instructions += patternInstructions(pattern);
    } catch (error) {
      throw new RefusedSchema(`${path}: ${(error as Error).message}`);
    }
    if ((patternChars += pattern.length) > MAX_SCHEMA_PATTERN_CHARS) {
      throw new RefusedSchema(`${path}: the schema's patterns have more than ${MAX_SCHEMA_PATTERN_CHARS} characters in all; use fewer or shorter patterns`);
    }
    if (instructions > MAX_SCHEMA_PATTERN_INSTRUCTIONS) {
      throw new RefusedSchema(`${path}: the schema's patterns compile to more than ${MAX_SCHEMA_PATTERN_INSTRUCTIONS} instructions in all; use fewer or simpler patterns`);
    }
  }

  const root = copy(schema, '') as JsonSchema;
  for (const site of refs) checkRef(site);
  return root;

  // A JSON pointer is checked against every resource of the document (the root and each
  // $id), not only the one it names: whatever base ajv settles on, the spot it compiles
  // is then a metered subschema (or a boolean, or a meta-schema ajv ships).
  function checkRef({ ref, path }: RefSite): void {
    const hash = ref.indexOf('#');
    if (hash === -1) return; // a bare id names a resource root: metered
    let fragment: string;
    try {
      fragment = decodeURIComponent(ref.slice(hash + 1));
    } catch {
      throw new RefusedSchema(`${path}: ${JSON.stringify(ref)} has a malformed fragment`);
    }
    if (!fragment.startsWith('/')) return; // "#" and "#anchor" land on schema positions, all metered
    const segments = fragment.slice(1).split('/').map((segment) => segment.replace(/~1/g, '/').replace(/~0/g, '~'));
    for (const resource of resources) {
      let target: Json | undefined = resource;
      for (const key of segments) {
        target = target !== null && typeof target === 'object' ? (target as Readonly<Record<string, Json>>)[key] : undefined;
        if (target === undefined) break;
      }
      if (target === undefined || target === null || typeof target !== 'object' || metered.has(target)) continue;
      throw new RefusedSchema(`${path}: ${JSON.stringify(ref)} points at a value that is not a subschema (inside enum, const or a keyword map)`);
    }
  }
}

/** How many JSON nodes a value holds (a string counts once per 16 characters): the cost of comparing data with it. */
export function nodeCount(value: unknown): number {
  if (typeof value === 'string') return 1 + (value.length >> 4);
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + nodeCount(item), 1);
  if (value !== null && typeof value === 'object') return Object.values(value).reduce((sum: number, item) => sum + nodeCount(item), 1);
  return 1;
}
