// A TypeScript type for a JSON Schema, for the declarations Code Mode puts in its tool's
// description. Tools' schemas use a small subset (objects, arrays, scalars, enums, unions),
// so a small synchronous generator covers them; json-schema-to-typescript is async, pulls in
// a formatter and a $ref resolver that reads files, and is built for emitting files.
//
// What it reads: type (or a list of types), enum, const, properties, required,
// additionalProperties, items, prefixItems, anyOf, oneOf, allOf, local $ref (#/$defs/...,
// #/definitions/...), description (as a JSDoc comment). Everything else widens to what the
// schema still says, never narrows: a keyword it does not understand can only make the type
// looser than the validator (`unknown` at worst). The schema came from a plugin: names are
// quoted, comments cannot close themselves, and depth, size and work are bounded: every
// render step and every union join is charged to a budget (past it the type is `unknown`),
// and a `$ref` is rendered once per place it can appear (memoized), so a definition that
// refers to itself many times cannot re-render exponentially.
import type { JsonObject, JsonSchema, JsonValue } from '../json/json-types.js';
import { escapeControlsInJson } from '../util/visible-text.js';

/** Deepest nesting rendered; below it a type is `unknown`. Also stops $ref cycles. */
const MAX_DEPTH = 12;
/** Longest rendered type, in characters; past it the whole type is `unknown`. */
const MAX_TYPE_CHARS = 16 * 1024;
/** Most render steps (schema nodes visited, union members joined) for one type; past it the whole type is `unknown`. */
const MAX_STEPS = 4096;
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

class TooLarge extends Error {}

interface Budget {
  chars: number;
  steps: number;
  /** Rendered `$ref`s by reference, indent and depth: each is rendered once. */
  readonly refs: Map<string, string>;
}

/** The TypeScript type of values the schema accepts; `unknown` where it cannot say more. */
export function schemaToTypeScript(schema: JsonSchema | undefined, indent = ''): string {
  if (schema === undefined) return 'unknown';
  const budget: Budget = { chars: MAX_TYPE_CHARS, steps: MAX_STEPS, refs: new Map() };
  try {
    return render(schema, schema, indent, 0, budget);
  } catch (error) {
    if (error instanceof TooLarge) return 'unknown';
    throw error;
  }
}

/** A property name as TypeScript writes it: bare when it is an identifier, quoted otherwise. */
export function propertyKey(name: string): string {
  return IDENTIFIER.test(name) ? name : quoted(name);
}

/**
 * A string literal that shows what it holds: JSON escapes C0 controls, and here every other
 * control, invisible format character (bidi, zero-width, tags) and line or paragraph
 * separator becomes a `\uXXXX` escape too, as docComment blanks them in comments.
 */
function quoted(text: string): string {
  return escapeControlsInJson(JSON.stringify(text));
}

/** A JSDoc block for text a plugin wrote: it cannot end the comment early or break the line structure. */
export function docComment(text: unknown, indent: string): string {
  if (typeof text !== 'string' || text.trim() === '') return '';
  // Controls (but the newline), invisible format characters and line separators become spaces.
  const safe = text.replace(/\*\//g, '*\\/').replace(/(?!\n)[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}]/gu, ' ').trim().slice(0, 2000);
  const lines = safe.split('\n');
  if (lines.length === 1) return `${indent}/** ${lines[0]} */\n`;
  return `${indent}/**\n${lines.map((line) => `${indent} * ${line}`.trimEnd()).join('\n')}\n${indent} */\n`;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function spend(budget: Budget, text: string): string {
  budget.chars -= text.length;
  if (budget.chars < 0) throw new TooLarge();
  return text;
}

function step(budget: Budget, count = 1): void {
  budget.steps -= count;
  if (budget.steps < 0) throw new TooLarge();
}

function literal(value: JsonValue): string {
  // JSON text is a TypeScript literal type for strings, numbers, booleans and null; objects are not worth spelling.
  if (typeof value === 'string') return quoted(value);
  return value === null || typeof value !== 'object' ? JSON.stringify(value) : 'unknown';
}

function union(parts: readonly string[], budget: Budget): string {
  step(budget, parts.length);
  const unique = [...new Set(parts)];
  if (unique.includes('unknown')) return 'unknown';
  if (unique.length === 0) return 'never';
  return unique.length === 1 ? (unique[0] as string) : unique.map((part) => (part.includes('=>') ? `(${part})` : part)).join(' | ');
}

function resolveRef(root: JsonSchema, ref: string): JsonValue | undefined {
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  if (match === null) return undefined;
  const defs = root[match[1] as string];
  const name = (match[2] as string).replace(/~1/g, '/').replace(/~0/g, '~');
  return isObject(defs) && Object.hasOwn(defs, name) ? defs[name] : undefined;
}

function render(schema: JsonValue | undefined, root: JsonSchema, indent: string, depth: number, budget: Budget): string {
  if (schema === true || schema === undefined) return 'unknown';
  if (schema === false) return 'never';
  if (!isObject(schema) || depth > MAX_DEPTH) return 'unknown';
  step(budget);
  if (typeof schema.$ref === 'string') {
    const key = `${schema.$ref}\0${indent}\0${depth}`;
    const known = budget.refs.get(key);
    if (known !== undefined) return spend(budget, known);
    const target = resolveRef(root, schema.$ref);
    const type = target === undefined ? 'unknown' : render(target, root, indent, depth + 1, budget);
    budget.refs.set(key, type);
    return type;
  }
  if (Object.hasOwn(schema, 'const')) return spend(budget, literal(schema.const as JsonValue));
  if (Array.isArray(schema.enum)) return spend(budget, union(schema.enum.map(literal), budget));
  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : undefined;
  if (variants !== undefined) return spend(budget, union(variants.map((variant) => render(variant, root, indent, depth + 1, budget)), budget));
  if (Array.isArray(schema.allOf) && schema.allOf.length > 0) {
    const parts = schema.allOf.map((part) => render(part, root, indent, depth + 1, budget)).filter((part) => part !== 'unknown');
    step(budget, parts.length);
    return parts.length === 0 ? 'unknown' : spend(budget, parts.map((part) => (part.includes('|') ? `(${part})` : part)).join(' & '));
  }
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.filter((type): type is string => typeof type === 'string') : undefined;
  if (types === undefined) {
    // No type: the shape keywords still say what it is when it is one.
    if (isObject(schema.properties)) return renderObject(schema, root, indent, depth, budget);
    if (schema.items !== undefined || schema.prefixItems !== undefined) return renderArray(schema, root, indent, depth, budget);
    return 'unknown';
  }
  return union(types.map((type) => {
    switch (type) {
      case 'string':
        return 'string';
      case 'number':
      case 'integer':
        return 'number';
      case 'boolean':
        return 'boolean';
      case 'null':
        return 'null';
      case 'array':
        return renderArray(schema, root, indent, depth, budget);
      case 'object':
        return renderObject(schema, root, indent, depth, budget);
      default:
        return 'unknown';
    }
  }), budget);
}

function renderArray(schema: JsonObject, root: JsonSchema, indent: string, depth: number, budget: Budget): string {
  if (Array.isArray(schema.prefixItems)) {
    const head = schema.prefixItems.map((item) => render(item, root, indent, depth + 1, budget));
    const rest = schema.items === false ? '' : `, ...${wrap(render(schema.items, root, indent, depth + 1, budget))}[]`;
    return spend(budget, `[${head.join(', ')}${rest}]`);
  }
  return spend(budget, `${wrap(render(schema.items, root, indent, depth + 1, budget))}[]`);
}

function wrap(type: string): string {
  return /[|&]/.test(type) ? `(${type})` : type;
}

function renderObject(schema: JsonObject, root: JsonSchema, indent: string, depth: number, budget: Budget): string {
  const properties = isObject(schema.properties) ? schema.properties : {};
  const required = new Set(Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : []);
  const inner = `${indent}  `;
  let body = '';
  for (const name of Object.keys(properties)) {
    const property = properties[name];
    const description = isObject(property) ? property.description : undefined;
    body += spend(budget, `${docComment(description, inner)}${inner}${propertyKey(name)}${required.has(name) ? '' : '?'}: ${render(property, root, inner, depth + 1, budget)};\n`);
  }
  const extra = schema.additionalProperties;
  if (extra !== false && !(Object.keys(properties).length > 0 && extra === undefined)) {
    // An open object: other keys may hold anything the schema allows for them.
    const value = extra === undefined || extra === true ? 'unknown' : render(extra, root, inner, depth + 1, budget);
    body += spend(budget, `${inner}[key: string]: ${value};\n`);
  }
  return body === '' ? '{}' : `{\n${body}${indent}}`;
}
