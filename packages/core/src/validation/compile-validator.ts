// One compiled ajv validator per schema document, compiled at registration and
// cached for the schema's lifetime: never recompiled per call. Plugin schemas are
// hostile input, and validation runs on the host's event loop, so the work is bounded:
// regular expressions (pattern, patternProperties, formats) run on a linear-time engine,
// uniqueItems is linear, and every validation runs under a step budget.
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
const options = { strict: false, allErrors: true, logger: false, validateSchema: true, verbose: true, ownProperties: true, code: { regExp: linearRegExp } } as const;

/** One ajv instance per dialect, made the first time a schema of that dialect is compiled (each takes milliseconds). */
const instances: { draft07?: AjvInstance; draft2019?: AjvInstance; draft2020?: AjvInstance } = {};

function bounded<T extends AjvInstance>(ajv: T): T {
  addFormats(ajv);
  useLinearFormats(ajv);
  ajv.removeKeyword('uniqueItems');
  ajv.addKeyword(uniqueItemsKeyword);
  ajv.addKeyword(meterKeyword);
  return ajv;
}

function pick(schema: JsonSchema): AjvInstance {
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-0[467]/.test(dialect)) return (instances.draft07 ??= bounded(new Ajv(options)));
  if (dialect.includes('2019-09')) return (instances.draft2019 ??= bounded(new Ajv2019(options)));
  return (instances.draft2020 ??= bounded(new Ajv2020(options)));
}

/** Compiled once per schema; each validator built on it keeps its own budget (a cached validator once answered with another's). */
const cache = new WeakMap<JsonSchema, ReturnType<AjvInstance['compile']>>();

export function compileValidator(schema: JsonSchema, toolName: string, field: 'parameters' | 'output', budget: ValidationBudget = DEFAULT_VALIDATION_BUDGET): SchemaValidator {
  const compiled = cache.get(schema) ?? compileSchema(schema, toolName, field);
  cache.set(schema, compiled);
  const validate = ((value: unknown, jsonLength?: number): boolean => {
    const maxSteps = budget.baseSteps + budget.stepsPerChar * (jsonLength ?? JSON.stringify(value)?.length ?? 0);
    try {
      const valid = meter.run(maxSteps, () => compiled(value)) === true;
      validate.errors = valid ? null : (compiled.errors ?? null);
      return valid;
    } catch (error) {
      validate.errors = [refusal(error, maxSteps)];
      return false;
    }
  }) as SchemaValidator;
  validate.errors = null;
  return validate;
}

function compileSchema(schema: JsonSchema, toolName: string, field: 'parameters' | 'output'): ReturnType<AjvInstance['compile']> {
  const ajv = pick(schema);
  let compiled: ReturnType<AjvInstance['compile']>;
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
