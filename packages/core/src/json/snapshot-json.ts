// Deep-copies a value into frozen plain JSON, refusing anything JSON cannot carry
// losslessly, so what is validated is exactly what is used and what is sent.
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonValue } from './json-types.js';

export interface SnapshotOptions {
  /** Names the value in errors, e.g. `tool "search" parameters`. */
  readonly label: string;
  /** Deepest nesting accepted; deeper input is refused rather than overflowing the stack. */
  readonly maxDepth?: number;
}

const DEFAULT_MAX_DEPTH = 256;

function pathText(path: readonly (string | number)[], length: number): string {
  if (length === 0) return '(root)';
  let text = '';
  for (let index = 0; index < length; index += 1) {
    const part = path[index] as string | number;
    text += typeof part === 'number' ? `[${part}]` : /^[A-Za-z_$][\w$]*$/.test(part) ? `.${part}` : `[${JSON.stringify(part)}]`;
  }
  return text.replace(/^\./, '');
}

/** The refusals this module threw: told apart from anything a getter threw by identity alone. */
const ownRefusals = new WeakSet<object>();

/** `details.maxDepth` is set only when the value was refused for its depth, so callers can tell that apart from the text. */
function reject(options: SnapshotOptions, path: readonly (string | number)[], length: number, reason: string, maxDepth?: number): never {
  const refusal = new AirlockError('NOT_LOSSLESS_JSON', `${options.label} is not lossless JSON at ${pathText(path, length)}: ${reason}`, {
    label: options.label,
    path: pathText(path, length),
    reason,
    ...(maxDepth === undefined ? {} : { maxDepth }),
  });
  ownRefusals.add(refusal);
  throw refusal;
}

function describe(value: unknown): string {
  if (value === undefined) return 'undefined';
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'symbol') return 'a symbol';
  if (typeof value === 'bigint') return 'a BigInt';
  if (typeof value === 'number') return String(value);
  const proto = Object.getPrototypeOf(value) as { constructor?: { name?: string } } | null;
  return `a ${proto?.constructor?.name ?? 'non-plain'} object`;
}

/** Returns a frozen deep copy, or throws AirlockError NOT_LOSSLESS_JSON naming the path. */
export function snapshotJson(value: unknown, options: SnapshotOptions): JsonValue {
  const maxDepth = options.maxDepth ?? DEFAULT_MAX_DEPTH;
  const ancestors = new Set<object>();
  // The keys down to the value being read: `path[0..depthNow)`. A level is defined the first
  // time it is reached and overwritten after, so no setter on Array.prototype ever runs.
  // Eight levels made by the literal itself (own elements from the start): most values need no more.
  const path: (string | number)[] = [0, 0, 0, 0, 0, 0, 0, 0];
  let depthNow = 0;
  const enter = (key: string | number): void => {
    if (depthNow < path.length) path[depthNow] = key;
    else Object.defineProperty(path, depthNow, { value: key, writable: true, enumerable: true, configurable: true });
    depthNow += 1;
  };
  const leave = (): void => {
    depthNow -= 1;
  };

  const copy = (input: unknown, depth: number): JsonValue => {
    if (input === null || typeof input === 'boolean' || typeof input === 'string') return input;
    if (typeof input === 'number') {
      if (!Number.isFinite(input)) reject(options, path, depthNow, `${describe(input)} is not a JSON number`);
      return input === 0 ? 0 : input; // -0 has no JSON spelling
    }
    if (typeof input !== 'object') reject(options, path, depthNow, `${describe(input)} is not JSON`);
    if (depth >= maxDepth) reject(options, path, depthNow, `nesting deeper than ${maxDepth}`, maxDepth); // the root is level 1
    if (ancestors.has(input)) reject(options, path, depthNow, 'cycle');
    ancestors.add(input);
    try {
      return Array.isArray(input) ? copyArray(input, depth) : copyObject(input, depth);
    } finally {
      ancestors.delete(input);
    }
  };

  // Read twice: a getter or proxy could hand the validator one value and the tool another.
  // Plain property reads (numeric for arrays): Reflect.get with a string index was most of the cost.
  const readTwice = (holder: object, key: string | number): unknown => {
    const record = holder as Readonly<Record<string | number, unknown>>;
    const first = record[key];
    if (!Object.is(first, record[key])) reject(options, path, depthNow, 'value changes between reads (accessor or proxy)');
    return first;
  };

  const copyArray = (input: readonly unknown[], depth: number): JsonValue => {
    if (Object.getPrototypeOf(input) !== Array.prototype) reject(options, path, depthNow, `${describe(input)} is not a plain array`);
    const length: unknown = input.length;
    // Only a proxy lies about it; `new Array(anObject)` would hold that very object, uncopied.
    if (typeof length !== 'number' || !Number.isSafeInteger(length) || length < 0) reject(options, path, depthNow, 'an array whose length is not a count');
    const out: JsonValue[] = new Array<JsonValue>(length);
    for (let index = 0; index < length; index += 1) {
      enter(index);
      if (!Object.prototype.hasOwnProperty.call(input, index)) reject(options, path, depthNow, 'hole in a sparse array');
      const value = copy(readTwice(input, index), depth + 1);
      // An index the prototype chain has (someone's setter on Array.prototype) is defined, not assigned.
      if (index in out) Object.defineProperty(out, index, { value, enumerable: true, writable: true, configurable: true });
      else out[index] = value;
      leave();
    }
    return Object.freeze(out);
  };

  const copyObject = (input: object, depth: number): JsonValue => {
    const proto = Object.getPrototypeOf(input) as unknown;
    if (proto !== Object.prototype && proto !== null) reject(options, path, depthNow, `${describe(input)} is not a plain object`);
    if (Object.getOwnPropertySymbols(input).length > 0) reject(options, path, depthNow, 'symbol-keyed property');
    const out: Record<string, JsonValue> = {};
    for (const key of Object.keys(input)) {
      enter(key);
      const value = copy(readTwice(input, key), depth + 1);
      // A key Object.prototype has ("__proto__", "toString"...) is defined, not assigned: no
      // prototype swap, no inherited setter, no throw where intrinsics are frozen. Every other
      // key is assigned (defineProperty for each key was most of the cost).
      if (key in out) Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
      else out[key] = value;
      leave();
    }
    return Object.freeze(out);
  };

  try {
    return copy(value, 0);
  } catch (error) {
    // Nothing of the thrown value is read (a proxy's traps, an error's getters could run):
    // only our own refusals, known by identity, pass. Anything else a getter or trap threw
    // (a revoked proxy, a lying ownKeys, recursion, an AirlockError of its own making) is
    // refused like any other value that is not plain JSON, at the path it was read.
    if (typeof error === 'object' && error !== null && ownRefusals.has(error)) throw error;
    return reject(options, path, depthNow, 'reading it threw');
  }
}
