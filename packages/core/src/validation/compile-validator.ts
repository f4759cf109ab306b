// One compiled ajv validator per schema document, compiled at registration and
// cached for the schema's lifetime: never recompiled per call.
import { Ajv, type ValidateFunction } from 'ajv';
import { Ajv2019 } from 'ajv/dist/2019.js';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonSchema } from '../json/json-types.js';

type AjvInstance = InstanceType<typeof Ajv> | Ajv2019 | Ajv2020;

// ajv-formats is CommonJS; under NodeNext its default import is the module object.
const addFormats = ((addFormatsModule as unknown as { default?: unknown }).default ?? addFormatsModule) as (ajv: AjvInstance) => void;

const options = { strict: false, allErrors: true, logger: false, validateSchema: true, verbose: true } as const;

let instances: { draft07: AjvInstance; draft2019: AjvInstance; draft2020: AjvInstance } | undefined;

function pick(schema: JsonSchema): AjvInstance {
  if (instances === undefined) {
    instances = { draft07: new Ajv(options), draft2019: new Ajv2019(options), draft2020: new Ajv2020(options) };
    for (const ajv of Object.values(instances)) addFormats(ajv);
  }
  const dialect = typeof schema.$schema === 'string' ? schema.$schema : '';
  if (/draft-0[467]/.test(dialect)) return instances.draft07;
  if (dialect.includes('2019-09')) return instances.draft2019;
  return instances.draft2020;
}

const cache = new WeakMap<JsonSchema, ValidateFunction>();

export function compileValidator(schema: JsonSchema, toolName: string, field: 'parameters' | 'output'): ValidateFunction {
  const cached = cache.get(schema);
  if (cached !== undefined) return cached;
  let validate: ValidateFunction;
  try {
    validate = pick(schema).compile(schema);
  } catch (error) {
    throw new AirlockError('UNSUPPORTED_SCHEMA', `tool "${toolName}" ${field} is not a usable JSON Schema: ${(error as Error).message}`, { tool: toolName, field });
  }
  cache.set(schema, validate);
  return validate;
}
