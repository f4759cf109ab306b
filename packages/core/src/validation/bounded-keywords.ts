// The two keywords that bound ajv's work: the meter (charged by every subschema
// application) and a linear `uniqueItems` (ajv's compares every pair of items:
// 40,000 objects took 22 s).
import { _, type CodeKeywordDefinition, type FuncKeywordDefinition } from 'ajv';
import type { DataValidateFunction } from 'ajv/dist/types/index.js';
import { METER_KEYWORD, nodeCount } from './metered-schema.js';
import { patternWeight } from './linear-regexp.js';
import { meter } from './work-meter.js';

type Schema = Record<string, unknown>;

/** A possible error (an object ajv builds and keeps) costs about this many plain steps. */
const ERROR = 16;

/** Keywords that walk a string, an array's items or an object's keys once per application. */
const SCANS_CHARS = ['minLength', 'maxLength'];
/** Formats mostly run on the linear engine: steps per character, like a short pattern. */
const FORMAT = 8;
const SCANS_ITEMS = ['items', 'prefixItems', 'additionalItems', 'contains', 'unevaluatedItems', 'uniqueItems'];
const SCANS_KEYS = ['additionalProperties', 'propertyNames', 'minProperties', 'maxProperties', 'unevaluatedProperties'];

function count(schema: Schema, keywords: readonly string[], only?: unknown): number {
  return keywords.reduce((sum, keyword) => sum + (schema[keyword] === undefined || (only !== undefined && schema[keyword] !== only) ? 0 : 1), 0);
}

/**
 * Steps per character a pattern may cost. re2js simulates its program when its DFA gives up
 * (`a[ab]{1000}[cd]` over a's and b's), about 12 ns per instruction per character: a
 * 15-character pattern of 1,004 instructions took 10 µs a character. A step is about
 * 20 ns, so each instruction counts 0.6 (a class more, by its ranges: patternWeight).
 */
function patternCost(pattern: string): number {
  let weight: number;
  try {
    weight = patternWeight(pattern);
  } catch {
    return 0; // refused at load (metered-schema), never run
  }
  return 4 + Math.ceil((weight * 3) / 5);
}

export interface Weight {
  /** Fixed steps of one application. */
  readonly weight: number;
  /** Steps per character of a string value, item of an array, key of an object. */
  readonly perChar: number;
  readonly perItem: number;
  readonly perKey: number;
  /** Steps per character of an object's keys (patternProperties tests each key). */
  readonly perKeyChar: number;
}

/** What one application of `schema` costs. */
export function weigh(schema: Schema): Weight {
  let weight = 1;
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'properties' && value !== null && typeof value === 'object') weight += Object.keys(value).length;
    // Each name may be missing: one error apiece.
    else if (keyword === 'required' || keyword === 'dependentRequired' || keyword === 'dependencies') weight += ERROR * nodeCount(value);
    else if (keyword === 'enum' || keyword === 'const' || keyword === 'type') weight += nodeCount(value);
    else weight += 1;
  }
  // `false` for the rest of the keys or items: one error per extra key or item.
  const extraKeys = count(schema, ['additionalProperties', 'unevaluatedProperties'], false);
  const extraItems = count(schema, ['items', 'additionalItems', 'unevaluatedItems'], false);
  // Comparing a value with each enum member, or with const, walks it once per member.
  const equals = Array.isArray(schema.enum) ? schema.enum.length : schema.const === undefined ? 0 : 1;
  const patterns = schema.patternProperties !== null && typeof schema.patternProperties === 'object' ? Object.keys(schema.patternProperties) : [];
  // patternProperties tests every key against every pattern, and additionalProperties tests them again.
  const keyPatterns = patterns.reduce((sum, pattern) => sum + patternCost(pattern), 0) * (schema.additionalProperties === undefined ? 1 : 2);
  return {
    weight,
    perChar: count(schema, SCANS_CHARS) + (typeof schema.format === 'string' ? FORMAT : 0) + (typeof schema.pattern === 'string' ? patternCost(schema.pattern) : 0) + equals,
    perItem: count(schema, SCANS_ITEMS) + ERROR * extraItems + equals,
    perKey: count(schema, SCANS_KEYS) + ERROR * extraKeys + patterns.length + equals,
    perKeyChar: keyPatterns,
  };
}

export const meterKeyword: CodeKeywordDefinition = {
  keyword: METER_KEYWORD,
  schemaType: 'boolean',
  // Charged first in each application, before $ref, the applicators and the typed keywords:
  // one costly application (a long key against many patterns) is refused before it runs.
  before: '$ref',
  code(cxt) {
    const { weight, perChar, perItem, perKey, perKeyChar } = weigh(cxt.parentSchema as Schema);
    const ref = cxt.gen.scopeValue('keyword', { ref: meter });
    cxt.gen.code(_`${ref}.apply(${cxt.data}, ${weight}, ${perChar}, ${perItem}, ${perKey}, ${perKeyChar})`);
  },
};

/** Canonical JSON of a value (object keys sorted), charging the meter per node and per 16 characters. */
function canonical(value: unknown): string {
  meter.charge(typeof value === 'string' ? 1 + (value.length >> 4) : 1);
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const record = value as Record<string, unknown>;
    return `{${Object.keys(record).sort().map((key) => `${canonical(key)}:${canonical(record[key])}`).join(',')}}`;
  }
  return JSON.stringify(value);
}

const uniqueItems: DataValidateFunction = (items: unknown) => {
  if (!Array.isArray(items)) return true;
  const seen = new Map<string, number>();
  for (let index = 0; index < items.length; index += 1) {
    const key = canonical(items[index]);
    const first = seen.get(key);
    if (first !== undefined) {
      uniqueItems.errors = [{ keyword: 'uniqueItems', message: `must NOT have duplicate items (items ## ${first} and ${index} are identical)`, params: { i: index, j: first } }];
      return false;
    }
    seen.set(key, index);
  }
  return true;
};

export const uniqueItemsKeyword: FuncKeywordDefinition = {
  keyword: 'uniqueItems',
  type: 'array',
  schemaType: 'boolean',
  errors: true,
  compile: (enabled: boolean) => (enabled ? uniqueItems : () => true),
};
