// The built-ins that @noble/ciphers's ChaCha20 reads when it loads and runs (found by
// reading its bundled code: typed array accessors and methods, a few statics, the
// prototype links between them). The realm records them before plugin code runs; the
// random part checks them before every refill, so a plugin (or a polyfill it bundles)
// that replaced one gets a plain error instead of a stream computed by its own code.
// Recording is one array of reads, no descriptor object kept: a few µs per realm.

const DATA = 0;
const ACCESSOR = 1;
const PROTOTYPE = 2;
const ABSENT = 3;

/** [target, key, expected, kind] four at a time. */
export type Snapshot = readonly unknown[];

export function snapshot(): Snapshot {
  const getPrototypeOf = Object.getPrototypeOf;
  const getter = (target: object, key: PropertyKey): unknown => Object.getOwnPropertyDescriptor(target, key)!.get;
  const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype) as Record<PropertyKey, unknown>;
  const TypedArray = getPrototypeOf(Uint8Array) as Record<PropertyKey, unknown>;
  const ArrayIteratorPrototype = getPrototypeOf([][Symbol.iterator]()) as Record<PropertyKey, unknown>;
  const StringPrototype = String.prototype as unknown as Record<PropertyKey, unknown>;
  // Shadowing: the same names defined on Uint8Array/Uint32Array or their prototypes would win over %TypedArray%'s.
  const shadows: unknown[] = [];
  const views = [Uint8Array.prototype, Uint32Array.prototype];
  const shadowed = ['buffer', 'byteOffset', 'byteLength', 'length', 'fill', 'set', 'subarray', 'values', Symbol.iterator];
  for (let v = 0; v < views.length; v += 1) {
    for (let k = 0; k < shadowed.length; k += 1) shadows.push(views[v], shadowed[k], undefined, ABSENT);
  }
  return [
    ...shadows,
    Uint8Array, 'from', undefined, ABSENT,
    Uint8Array, 'of', undefined, ABSENT,
    Uint32Array, 'from', undefined, ABSENT,
    Uint32Array, 'of', undefined, ABSENT,
    TypedArrayPrototype, 'buffer', getter(TypedArrayPrototype, 'buffer'), ACCESSOR,
    TypedArrayPrototype, 'byteOffset', getter(TypedArrayPrototype, 'byteOffset'), ACCESSOR,
    TypedArrayPrototype, 'byteLength', getter(TypedArrayPrototype, 'byteLength'), ACCESSOR,
    TypedArrayPrototype, 'length', getter(TypedArrayPrototype, 'length'), ACCESSOR,
    TypedArrayPrototype, 'fill', TypedArrayPrototype.fill, DATA,
    TypedArrayPrototype, 'set', TypedArrayPrototype.set, DATA,
    TypedArrayPrototype, 'subarray', TypedArrayPrototype.subarray, DATA,
    TypedArrayPrototype, 'values', TypedArrayPrototype.values, DATA,
    TypedArrayPrototype, Symbol.iterator, TypedArrayPrototype[Symbol.iterator], DATA,
    TypedArrayPrototype, 'constructor', TypedArrayPrototype.constructor, DATA,
    TypedArray, 'from', TypedArray.from, DATA,
    TypedArray, 'of', TypedArray.of, DATA,
    Uint8Array.prototype, 'constructor', Uint8Array.prototype.constructor, DATA,
    Uint8Array, 'name', Uint8Array.name, DATA,
    Uint8Array, Symbol.hasInstance, undefined, ABSENT,
    Uint8Array.prototype, null, TypedArrayPrototype, PROTOTYPE,
    Uint32Array.prototype, null, TypedArrayPrototype, PROTOTYPE,
    Uint8Array, null, TypedArray, PROTOTYPE,
    Uint32Array, null, TypedArray, PROTOTYPE,
    ArrayBuffer, 'isView', ArrayBuffer.isView, DATA,
    Number, 'isSafeInteger', Number.isSafeInteger, DATA,
    Array, 'isArray', Array.isArray, DATA,
    Object, 'assign', Object.assign, DATA,
    Math, 'min', Math.min, DATA,
    Math, 'floor', Math.floor, DATA,
    Array.prototype, 'push', Array.prototype.push, DATA,
    Array.prototype, Symbol.iterator, Array.prototype[Symbol.iterator], DATA,
    ArrayIteratorPrototype, 'next', ArrayIteratorPrototype.next, DATA,
    StringPrototype, 'split', StringPrototype.split, DATA,
    StringPrototype, 'charCodeAt', StringPrototype.charCodeAt, DATA,
    StringPrototype, Symbol.split, undefined, ABSENT,
  ];
}

import type { Intrinsics } from './intrinsics.js';

/**
 * Whether any recorded built-in differs now. Reads only own properties of the fresh
 * descriptor objects, so a getter a plugin put on Object.prototype cannot answer for them.
 * The intrinsics used here are the ones captured before plugin code ran.
 */
export function changedSince(before: Snapshot, intrinsics: Pick<Intrinsics, 'getOwnPropertyDescriptor' | 'getPrototypeOf' | 'hasOwn'>): boolean {
  const { getOwnPropertyDescriptor, getPrototypeOf, hasOwn } = intrinsics;
  for (let i = 0; i < before.length; i += 4) {
    const target = before[i] as object;
    const key = before[i + 1] as PropertyKey | null;
    const expected = before[i + 2];
    const kind = before[i + 3];
    if (kind === PROTOTYPE) {
      if (getPrototypeOf(target) !== expected) return true;
      continue;
    }
    const descriptor = getOwnPropertyDescriptor(target, key as PropertyKey);
    if (kind === ABSENT) {
      if (descriptor !== undefined) return true;
    } else if (descriptor === undefined) return true;
    else if (kind === DATA ? !hasOwn(descriptor, 'value') || descriptor.value !== expected : !hasOwn(descriptor, 'get') || descriptor.get !== expected) return true;
  }
  return false;
}
