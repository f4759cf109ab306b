// Captured when the realm is built, before any plugin code runs: the ECMAScript
// constructors the helpers and their libraries use and a few methods. The lazily loaded
// parts of the bundle receive them as one record (see captured.ts), so a plugin that later
// replaces `globalThis.Uint8Array`, `Map` or `Uint8Array.prototype.set` changes nothing
// they use.
import constructorNames from './constructor-names.json' with { type: 'json' };
import { makeDOMException, type DOMExceptionConstructor } from './dom-exception.js';

// The names every part sees as its own bindings (the build script declares them around each part).
const CONSTRUCTOR_NAMES = constructorNames as readonly ConstructorName[];

type ConstructorName =
  | 'Object' | 'Array' | 'String' | 'Number' | 'Boolean' | 'Symbol' | 'BigInt' | 'Math' | 'JSON' | 'Reflect' | 'Date' | 'RegExp' | 'Map' | 'Set' | 'WeakMap' | 'WeakSet'
  | 'Promise' | 'Error' | 'TypeError' | 'RangeError' | 'SyntaxError' | 'EvalError' | 'ReferenceError' | 'URIError' | 'ArrayBuffer' | 'DataView'
  | 'Int8Array' | 'Uint8Array' | 'Uint8ClampedArray' | 'Int16Array' | 'Uint16Array' | 'Int32Array' | 'Uint32Array' | 'Float32Array' | 'Float64Array' | 'BigInt64Array' | 'BigUint64Array'
  | 'parseInt' | 'parseFloat' | 'isNaN' | 'isFinite' | 'encodeURIComponent' | 'decodeURIComponent' | 'escape' | 'unescape';
type Constructors = { readonly [K in ConstructorName]: K extends keyof typeof globalThis ? (typeof globalThis)[K] : unknown };

export interface Intrinsics extends Constructors {
  readonly libraryGlobal: Readonly<Record<string, unknown>>;
  readonly DOMException: DOMExceptionConstructor;
  readonly apply: typeof Reflect.apply;
  readonly defineProperty: typeof Object.defineProperty;
  readonly getOwnPropertyDescriptor: typeof Object.getOwnPropertyDescriptor;
  readonly getPrototypeOf: typeof Object.getPrototypeOf;
  readonly freeze: typeof Object.freeze;
  readonly create: typeof Object.create;
  readonly hasOwn: (target: object, key: PropertyKey) => boolean;
  readonly ownKeys: typeof Reflect.ownKeys;
  /** The typed array's kind ("Uint8Array"...), or undefined for anything that is not a typed array. */
  readonly typedArrayKind: (value: unknown) => string | undefined;
  /** The bytes a typed array views, as a Uint8Array over the same memory. */
  readonly bytesOf: (view: unknown) => Uint8Array;
  readonly byteLengthOf: (view: unknown) => number;
  readonly setBytes: (target: Uint8Array, source: Uint8Array, offset: number) => void;
  readonly charCodeAt: (text: string, index: number) => number;
  readonly charFromCode: (code: number) => string;
  /** `value` (0-255) in hex, zero-padded to two digits. */
  readonly hexByte: (value: number) => string;
}

/**
 * What must be read before plugin code runs, read into one array: the cheapest thing to
 * build in every new realm (an object with this many named properties would cost a
 * hidden-class transition per property, per realm). Everything else is derived from it
 * when a part first loads (`intrinsicsFrom`).
 */
export function captureIntrinsics(): readonly unknown[] {
  const real = globalThis as unknown as Record<string, unknown>;
  const values: unknown[] = [];
  for (let i = 0; i < CONSTRUCTOR_NAMES.length; i += 1) values[i] = real[CONSTRUCTOR_NAMES[i]!];
  const TypedArrayPrototype = Object.getPrototypeOf(Uint8Array.prototype) as object;
  const descriptor = Object.getOwnPropertyDescriptor;
  values[values.length] = descriptor(TypedArrayPrototype, Symbol.toStringTag)!.get;
  values[values.length] = descriptor(TypedArrayPrototype, 'buffer')!.get;
  values[values.length] = descriptor(TypedArrayPrototype, 'byteOffset')!.get;
  values[values.length] = descriptor(TypedArrayPrototype, 'byteLength')!.get;
  values[values.length] = Uint8Array.prototype.set;
  values[values.length] = String.prototype.charCodeAt;
  values[values.length] = String.fromCharCode;
  values[values.length] = Number.prototype.toString;
  values[values.length] = Object.create;
  values[values.length] = Object.defineProperty;
  values[values.length] = Object.getOwnPropertyDescriptor;
  values[values.length] = Object.getPrototypeOf;
  values[values.length] = Object.freeze;
  values[values.length] = Reflect.apply;
  values[values.length] = Object.hasOwn;
  values[values.length] = Reflect.ownKeys;
  return values;
}

/** The record the parts receive, built from the captured values (on first use of any part: nothing here reads the realm's globals). */
export function intrinsicsFrom(values: readonly unknown[]): Intrinsics {
  let at = CONSTRUCTOR_NAMES.length;
  const next = (): unknown => values[at++];
  const typedArrayTag = next() as () => unknown;
  const typedArrayBuffer = next() as () => unknown;
  const typedArrayOffset = next() as () => unknown;
  const typedArrayLength = next() as () => unknown;
  const typedArraySet = next() as () => unknown;
  const charCodeAtMethod = next() as () => unknown;
  const fromCharCode = next() as () => unknown;
  const numberToString = next() as () => unknown;
  const create = next() as typeof Object.create;
  const defineProperty = next() as typeof Object.defineProperty;
  const getOwnPropertyDescriptor = next() as typeof Object.getOwnPropertyDescriptor;
  const getPrototypeOf = next() as typeof Object.getPrototypeOf;
  const freeze = next() as typeof Object.freeze;
  const apply = next() as typeof Reflect.apply;
  const hasOwn = next() as (target: object, key: PropertyKey) => boolean;
  const ownKeys = next() as typeof Reflect.ownKeys;

  // What library code sees as `globalThis`/`self`: these constructors and nothing else (no
  // TextEncoder, Buffer or crypto to detect, so each library takes its own pure-JS path).
  const libraryGlobal = create(null) as Record<string, unknown>;
  const shared = create(null) as Record<string, unknown>;
  for (let i = 0; i < CONSTRUCTOR_NAMES.length; i += 1) libraryGlobal[CONSTRUCTOR_NAMES[i]!] = shared[CONSTRUCTOR_NAMES[i]!] = values[i];
  const Uint8ArrayIntrinsic = shared.Uint8Array as typeof Uint8Array;

  shared.libraryGlobal = freeze(libraryGlobal);
  shared.DOMException = makeDOMException(shared.Error as ErrorConstructor, shared.String as StringConstructor, defineProperty, create);
  shared.apply = apply;
  shared.defineProperty = defineProperty;
  shared.getOwnPropertyDescriptor = getOwnPropertyDescriptor;
  shared.getPrototypeOf = getPrototypeOf;
  shared.freeze = freeze;
  shared.create = create;
  shared.hasOwn = hasOwn;
  shared.ownKeys = ownKeys;
  shared.typedArrayKind = (value: unknown): string | undefined => apply(typedArrayTag, value, []) as string | undefined;
  shared.bytesOf = (view: unknown): Uint8Array =>
    new Uint8ArrayIntrinsic(apply(typedArrayBuffer, view, []) as ArrayBuffer, apply(typedArrayOffset, view, []) as number, apply(typedArrayLength, view, []) as number);
  shared.byteLengthOf = (view: unknown): number => apply(typedArrayLength, view, []) as number;
  shared.setBytes = (target: Uint8Array, source: Uint8Array, offset: number): void => {
    apply(typedArraySet, target, [source, offset]);
  };
  shared.charCodeAt = (text: string, index: number): number => apply(charCodeAtMethod, text, [index]) as number;
  shared.charFromCode = (code: number): string => apply(fromCharCode, undefined, [code]) as string;
  shared.hexByte = (value: number): string => (value < 16 ? '0' : '') + (apply(numberToString, value, [16]) as string);
  return shared as unknown as Intrinsics;
}
