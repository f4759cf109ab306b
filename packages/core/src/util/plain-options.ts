// Options objects an embedder passes, read once and checked by key: a misspelt key
// (`tennant`, `whem`, `rule`) is an error naming it, never an option silently left out (a
// misspelt `when` made a narrowed allow rule unconditional). Read through a copy, so a getter
// or proxy that throws is an INVALID_OPTION naming the object, not a raw error from deep inside.
import { AirlockError } from '../errors/airlock-error.js';
import { didYouMean } from './did-you-mean.js';

/**
 * A copy of `value`'s own enumerable properties, every key one of `known`; `value` must be a
 * plain object (not an array). Throws AirlockError INVALID_OPTION naming `path`.
 */
export function plainOptions<T extends object>(value: unknown, known: readonly (keyof T & string)[], path: string, shape = 'an object'): Partial<T> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AirlockError('INVALID_OPTION', `${path} must be ${shape}`, { path });
  let copy: Record<string, unknown>;
  try {
    copy = { ...value };
  } catch (error) {
    throw new AirlockError('INVALID_OPTION', `${path} could not be read (a getter or proxy trap threw)`, { path }, { cause: error });
  }
  for (const key of Object.keys(copy)) {
    if (!(known as readonly string[]).includes(key)) {
      throw new AirlockError('INVALID_OPTION', `${path}.${key} is not an option${didYouMean(key, known, (name) => `${path}.${name}`)}; known: ${known.join(', ')}`, { path: `${path}.${key}` });
    }
  }
  return copy as Partial<T>;
}
