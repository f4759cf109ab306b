// One compiled ajv validator per schema document, compiled at registration and
// cached for the schema's lifetime: never recompiled per call. Plugin schemas are
// hostile input, and validation runs on the host's event loop, so the work is bounded:
// regular expressions (pattern, patternProperties, formats) run on a linear-time engine,
// uniqueItems is linear, and every validation runs under a step budget. A value is first
// checked up to its first error; only a small one that failed is checked again for every
// error (the model's list of what to fix): listing every error of a megabyte of wrong items
// held the event loop about half a second, several times the cost of checking it.
import { Ajv, type ErrorObject } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonSchema } from '../json/json-types.js';
import { meterKeyword, uniqueItemsKeyword } from './bounded-keywords.js';
import { useLinearFormats } from './linear-formats.js';
import { linearRegExp } from './linear-regexp.js';
import { meteredCopy, RefusedSchema } from './metered-schema.js';
import { meter, WorkBudgetExceeded } from './work-meter.js';

type AjvInstance = InstanceType<typeof Ajv> | Ajv2019 | Ajv2020;

/**
 * A compiled schema: call it with a value (and its JSON length when known, which sets
 * its step budget); on false, `errors` says why.
 */
export interface SchemaValidator {
  (value: unknown, jsonLength?: number): boolean;
  errors: ErrorObject[] | null;
}

/**
 * Steps one validation may take: `baseSteps` plus `stepsPerChar` for each character of
 * the value's JSON. A step is about one keyword checked, or one character, item or key
 * scanned (a possible error counts more). Honest schemas take 1-3 steps per character,
 * so the budget leaves wide room, while work a hostile schema forces stays within a
 * small multiple of validating the same value honestly: a few milliseconds for a small
 * value, whatever the schema.
 */
export interface ValidationBudget {
  readonly baseSteps: number;
  readonly stepsPerChar: number;
}

export const DEFAULT_VALIDATION_BUDGET: ValidationBudget = Object.freeze({ baseSteps: 100_000, stepsPerChar: 16 });

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: AjvInstance) => void;

// ownProperties: `required: ["constructor"]` must not be met by Object.prototype, nor `properties` check what an object inherits.
const options = { strict: false, logger: false, validateSchema: true, verbose: true, ownProperties: true, code: { regExp: linearRegExp } } as const;

/** A value whose JSON is longer than this that fails is described by its first error only. */
export const EVERY_ERROR_MAX_CHARS = 64 * 1024;

/** How far a validator looks: up to the first error, or for every error. */
type Reach = 'first' | 'every';

/** One ajv instance per dialect and reach, made the first time it is needed (each takes milliseconds). */
const instances: Record<Reach, { draft07?: AjvInstance; draft2019?: AjvInstance; draft2020?: AjvInstance }> = { first: {}, every: {} };

function bounded<T extends AjvInstance>(ajv: T): T {
  addFormats(ajv);
  useLinearFormats(ajv);
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItemsKeyword);
  ajv.addKeyword(meterKeyword);
  return ajv;
}

function pick(schema: JsonSchema, reach: Reach): AjvInstance {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  const made = instances[reach];
  const reachOptions = { ...options, allErrors: reach === 'every' };
  if (/draft-0[467]/.test(dialect)) return (made.draft07 ??= bounded(new Ajv(reachOptions)));
  if (dialect.includes('2019-09')) return (made.draft2019 ??= bounded(new Ajv2019(reachOptions)));
  return (made.draft2020 ??= bounded(new Ajv2020(reachOptions)));
}

type Compiled = ReturnType<AjvInstance['compile']>;

/**
 * Compiled once per schema and reach (every error: only once a small value failed); each
 * validator built on them keeps its own budget (a cached validator once answered with another's).
 */
const cache: Record<Reach, WeakMap<JsonSchema, Compiled>> = { first: new WeakMap(), every: new WeakMap() };

function compiledFor(schema: JsonSchema, reach: Reach, toolName: string, field: 'parameters' | 'output'): Compiled {
  let compiled = cache[reach].get(schema);
  if (compiled === undefined) {
    compiled = compileSchema(schema, reach, toolName, field);
    cache[reach].set(schema, compiled);
  }
  return compiled;
}

export function compileValidator(schema: JsonSchema, toolName: string, field: 'parameters' | 'output', budget: ValidationBudget = DEFAULT_VALIDATION_BUDGET): SchemaValidator {
  const first = compiledFor(schema, 'first', toolName, field);
  const validate = ((value: unknown, jsonLength?: number): boolean => {
    const length = jsonLength ?? JSON.stringify(value)?.length ?? 0;
    const maxSteps = budget.baseSteps + budget.stepsPerChar * length;
    try {
      if (meter.run(maxSteps, () => first(value)) === true) {
        validate.errors = null;
        return true;
      }
      validate.errors = first.errors ?? null;
      if (length <= EVERY_ERROR_MAX_CHARS) {
        // Small and wrong: worth listing every error for the model, checked once more under the same budget.
        const every = compiledFor(schema, 'every', toolName, field);
        if (meter.run(maxSteps, () => every(value)) !== true) validate.errors = every.errors ?? validate.errors;
      }
      return false;
    } catch (error) {
      validate.errors = [refusal(error, maxSteps)];
      return false;
    }
  }) as SchemaValidator;
  validate.errors = null;
  return validate;
}

function compileSchema(schema: JsonSchema, reach: Reach, toolName: string, field: 'parameters' | 'output'): Compiled {
  const ajv = pick(schema, reach);
  let compiled: Compiled;
  let metered: JsonSchema | undefined;
  try {
    metered = meteredCopy(schema);
    compiled = ajv.compile(metered);
  } catch (error) {
    const reason = error instanceof RefusedSchema ? `at ${error.message}` : (error as Error).message;
    throw new AirlockError('UNSUPPORTED_SCHEMA', `tool "${toolName}" ${field} is not a usable JSON Schema: ${reason}`, { tool: toolName, field });
  } finally {
    // A root $id would stay registered on the shared instance: another plugin could then
    // $ref this schema, or be refused for reusing the id.
    if (metered !== undefined) ajv.removeSchema(metered);
  }
  return compiled;
}

/** The error a model reads when validation itself was stopped. */
function refusal(error: unknown, maxSteps: number): ErrorObject {
  const message =
    error instanceof WorkBudgetExceeded
      ? `validation stopped: checking this value against the schema needs more than ${maxSteps} steps (the tool's schema is too costly for a value of this size)`
      : error instanceof RangeError && /call stack/i.test(error.message)
        ? 'validation stopped: the schema recurses without end (a $ref cycle that never descends into the value)'
        : `validation failed: ${(error as Error).message}`;
  return { keyword: 'airlock:budget', instancePath: '', schemaPath: '#', params: {}, message };
}
