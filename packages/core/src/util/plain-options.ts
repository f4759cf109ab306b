// Options objects an embedder passes, read once and checked by key: a misspelt key
// (`tennant`, `whem`, `rule`) is an error naming it, never an option silently left out (a
// misspelt `when` made a narrowed allow rule unconditional). Every known key is read as the
// object answers it (own or inherited, a getter, not enumerable: as before), once, into a
// copy the caller then uses; a getter or proxy that throws is an INVALID_OPTION naming the
// object, not a raw error from deep inside.
import { AirlockError } from '../errors/airlock-error.js';
import { didYouMean } from './did-you-mean.js';

/** The string keys `value` and its prototypes hold, short of Object.prototype: where a misspelt option can hide. */
function keysOf(value: object): string[] {
  const keys: string[] = [];
  for (let at: object | null = value; at !== null && at !== Object.prototype; at = Reflect.getPrototypeOf(at)) {
    for (const key of Reflect.ownKeys(at)) if (typeof key === 'string' && !(at !== value && key === 'constructor')) keys.push(key);
  }
  return keys;
}

/**
 * A copy of the known options of `value` (a plain object, or any non-array object): each of
 * `known` read once, and no other string key allowed on it or its prototypes. Throws
 * AirlockError INVALID_OPTION naming `path`.
 */
export function plainOptions<T extends object>(value: unknown, known: readonly (keyof T & string)[], path: string, shape = 'an object'): Partial<T> {
  const copy: Record<string, unknown> = {};
  try {
    // Inside the try: Array.isArray throws on a revoked Proxy.
    if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new AirlockError('INVALID_OPTION', `${path} must be ${shape}`, { path });
    for (const key of keysOf(value)) {
      if (!(known as readonly string[]).includes(key)) {
        throw new AirlockError('INVALID_OPTION', `${path}.${key} is not an option${didYouMean(key, known, (name) => `${path}.${name}`)}; known: ${known.join(', ')}`, { path: `${path}.${key}` });
      }
    }
    for (const key of known) {
      const option: unknown = (value as Record<string, unknown>)[key];
      if (option !== undefined) copy[key] = option;
    }
  } catch (error) {
    if (AirlockError.isInstance(error)) throw error;
    throw new AirlockError('INVALID_OPTION', `${path} could not be read (a getter or proxy trap threw)`, { path }, { cause: error });
  }
  return copy as Partial<T>;
}

/** A list read once, by index: what is checked is what is used (a Proxy's length may answer differently each time). */
export function listCopy(list: readonly unknown[]): unknown[] {
  const copy: unknown[] = [];
  const length = list.length;
  for (let index = 0; index < length; index += 1) copy.push(list[index]);
  return copy;
}