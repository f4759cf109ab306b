// Turns ajv's errors into one line a model can act on: which field, what was
// expected, what it sent.
import type { ErrorObject } from 'ajv';
import { shortened } from '../util/shortened.js';

const MAX_LISTED = 8;
/** Errors read to find the distinct ones listed (anyOf branches repeat each other). */
const MAX_READ = 200;

/** Characters of a path or a property name the message repeats: the model sent them, and a key of megabytes would come back whole. */
const MAX_ECHOED = 128;

function cut(text: string): string {
  return shortened(text, MAX_ECHOED);
}

/** Where in the value: nothing at the root, a JSON pointer below it (`/items/2/id: `). */
function at(pointer: string): string {
  return pointer === '' ? '' : `${cut(pointer)}: `;
}

function typeName(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'number' && Number.isInteger(value)) return 'integer';
  return typeof value;
}

function describeOne(error: ErrorObject): string {
  // An error inside propertyNames is about a key, not a value: say which key.
  const key = (error as { propertyName?: unknown }).propertyName;
  const text = describeKeyword(error);
  return typeof key === 'string' ? `property name "${cut(key)}": ${text}` : text;
}

function describeKeyword(error: ErrorObject): string {
  const params = error.params as Record<string, unknown>;
  switch (error.keyword) {
    case 'required':
      return `${at(error.instancePath)}missing required property "${cut(String(params.missingProperty))}"`;
    case 'additionalProperties':
      return `${at(error.instancePath)}unexpected property "${cut(String(params.additionalProperty))}" (not allowed by the schema)`;
    case 'propertyNames':
      return `${at(error.instancePath)}property name "${cut(String(params.propertyName))}" is not allowed by the schema`;
    case 'not':
      return `${at(error.instancePath)}must not be a value the schema excludes ("not")`;
    case 'type':
      return `${at(error.instancePath)}must be ${String(params.type)}, got ${typeName(error.data)}`;
    case 'enum':
      return `${at(error.instancePath)}must be one of ${JSON.stringify(params.allowedValues)}`;
    case 'const':
      return `${at(error.instancePath)}must be ${JSON.stringify(params.allowedValue)}`;
    default:
      return `${at(error.instancePath)}${error.message ?? `fails "${error.keyword}"`}`;
  }
}

export function describeValidationErrors(errors: readonly ErrorObject[] | null | undefined): string {
  return listProblems(errors ?? [], describeOne);
}

/**
 * The first few distinct problems in one line, and how many more there are: shared by ajv's
 * errors and zod's issues. anyOf/oneOf branches repeat each other, so each line is kept once;
 * and only the first few are read: a megabyte of wrong items makes half a million errors, and
 * describing each held the event loop for seconds to list eight.
 */
export function listProblems<T>(problems: readonly T[], describe: (problem: T) => string): string {
  if (problems.length === 0) return 'does not match the schema';
  const lines = [...new Set(problems.slice(0, MAX_READ).map(describe))];
  const listed = lines.slice(0, MAX_LISTED).join('; ');
  const more = problems.length > MAX_READ ? problems.length - Math.min(lines.length, MAX_LISTED) : lines.length - MAX_LISTED;
  return more > 0 ? `${listed}; and ${more} more` : listed;
}
