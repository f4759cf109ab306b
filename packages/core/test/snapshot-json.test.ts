import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AirlockError, snapshotJson } from '../src/index.js';

const label = 'tool "t" parameters';

function rejection(value: unknown): AirlockError {
  try {
    snapshotJson(value, { label });
  } catch (error) {
    if (AirlockError.isInstance(error)) return error;
    throw error;
  }
  throw new Error('expected a rejection');
}

describe('snapshotJson rejects what JSON cannot carry losslessly', () => {
  const cyclic: Record<string, unknown> = { a: 1 };
  cyclic.self = cyclic;
  let flips = 0;
  const flaky = Object.defineProperty({}, 'x', { enumerable: true, get: () => (flips += 1) });
  const sparse = [1, , 3]; // eslint-disable-line no-sparse-arrays
  class Point { x = 1; }

  it.each([
    ['a function', { a: () => 1 }, 'a', 'a function'],
    ['undefined', { a: { b: undefined } }, 'a.b', 'undefined'],
    ['NaN', { n: NaN }, 'n', 'NaN'],
    ['Infinity', { list: [Infinity] }, 'list[0]', 'Infinity'],
    ['a BigInt', { big: 10n }, 'big', 'BigInt'],
    ['a symbol value', { s: Symbol('x') }, 's', 'symbol'],
    ['a symbol key', { [Symbol('k')]: 1 }, '(root)', 'symbol-keyed'],
    ['a cycle', cyclic, 'self', 'cycle'],
    ['a sparse array', { xs: sparse }, 'xs[1]', 'sparse'],
    ['a Date', { when: new Date(0) }, 'when', 'Date'],
    ['a Map', { m: new Map() }, 'm', 'Map'],
    ['a class instance', { p: new Point() }, 'p', 'Point'],
    ['an accessor that changes', flaky, 'x', 'changes between reads'],
    ['a top-level function', () => 1, '(root)', 'function'],
  ])('rejects %s with the path', (_name, value, path, reason) => {
    const error = rejection(value);
    expect(error.code).toBe('NOT_LOSSLESS_JSON');
    expect(error.message).toContain(label);
    expect(error.details.path).toBe(path);
    expect(error.message).toContain(reason);
  });

  it('refuses an array proxy whose length is not a count, instead of returning its live object', () => {
    const liar = { valueOf: () => 0 };
    const error = rejection({ list: new Proxy([1, 2], { get: (target, key) => (key === 'length' ? liar : Reflect.get(target, key)) }) });
    expect(error.details.path).toBe('list');
    expect(error.message).toContain('length is not a count');
  });

  it.each([
    ['a throwing getter', { a: Object.defineProperty({}, 'b', { enumerable: true, get: () => { throw new Error('boom'); } }) }, 'a.b'],
    ['a revoked proxy', { a: (() => { const { proxy, revoke } = Proxy.revocable({}, {}); revoke(); return proxy; })() }, 'a'],
    ['an ownKeys trap that repeats a key', { a: new Proxy({ k: 1 }, { ownKeys: () => ['k', 'k'] }) }, 'a'],
    // What was thrown is never read: a proxy whose every trap throws, an AirlockError of its own.
    ['a throw of a hostile proxy', { a: Object.defineProperty({}, 'b', { enumerable: true, get: () => { throw new Proxy({}, { get: () => { throw new Error('read'); }, getPrototypeOf: () => { throw new Error('read'); } }); } }) }, 'a.b'],
    ['a getter throwing an AirlockError', { a: Object.defineProperty({}, 'b', { enumerable: true, get: () => { throw new AirlockError('NOT_LOSSLESS_JSON', 'forged', { path: 'elsewhere' }); } }) }, 'a.b'],
  ])('refuses %s as NOT_LOSSLESS_JSON at its path, never a stray exception', (_name, value, path) => {
    const error = rejection(value);
    expect(error.code).toBe('NOT_LOSSLESS_JSON');
    expect(error.details.path).toBe(path);
    expect(error.message).toContain('reading it threw');
  });

  it('refuses nesting past maxDepth instead of overflowing the stack', () => {
    let deep: unknown = 1;
    for (let i = 0; i < 100_000; i += 1) deep = [deep];
    expect(rejection(deep).message).toContain('nesting deeper than 256');
  });

  it('keeps "__proto__" as an ordinary own key, never a prototype swap', () => {
    const input = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}');
    const copy = snapshotJson(input, { label }) as Record<string, unknown>;
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype);
    expect(Object.keys(copy)).toEqual(['__proto__', 'a']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it("defines keys Object.prototype has, so no inherited setter runs and a frozen prototype does not throw", () => {
    // A setter someone put on Object.prototype, and a key shadowing a frozen built-in's own.
    const seen: unknown[] = [];
    Object.defineProperty(Object.prototype, 'trap', { set: (value: unknown) => seen.push(value), configurable: true });
    const toStringWas = Object.getOwnPropertyDescriptor(Object.prototype, 'toString') as PropertyDescriptor;
    Object.defineProperty(Object.prototype, 'toString', { ...toStringWas, writable: false });
    try {
      const copy = snapshotJson(JSON.parse('{"trap": 1, "toString": 2, "constructor": 3, "a": 4}'), { label }) as Record<string, unknown>;
      expect(seen).toEqual([]);
      expect(Object.keys(copy)).toEqual(['trap', 'toString', 'constructor', 'a']);
      expect([copy.trap, copy.toString, copy.constructor, copy.a]).toEqual([1, 2, 3, 4]);
    } finally {
      delete (Object.prototype as Record<string, unknown>).trap;
      Object.defineProperty(Object.prototype, 'toString', toStringWas);
    }
  });

  it('defines array elements an inherited setter would catch: the copy holds data, never an accessor', () => {
    let calls = 0;
    // At an element's index and at levels of the copy's own path to it, shallow and deep.
    for (const index of ['1', '9']) Object.defineProperty(Array.prototype, index, { set: () => (calls += 1), get: () => Math.random(), configurable: true });
    try {
      let deep: unknown = ['x', 'y'];
      for (let level = 0; level < 12; level += 1) deep = [deep];
      const copy = snapshotJson({ list: ['a', 'b'], deep }, { label }) as { list: string[] };
      expect(calls).toBe(0);
      expect(Object.getOwnPropertyDescriptor(copy.list, 1)).toMatchObject({ value: 'b', writable: false });
    } finally {
      for (const index of ['1', '9']) delete (Array.prototype as unknown as Record<string, unknown>)[index];
    }
  });

  it('returns a deep-frozen copy that does not alias the input', () => {
    const input = { a: { b: [1, { c: 'x' }] } };
    const copy = snapshotJson(input, { label }) as { a: { b: [number, { c: string }] } };
    input.a.b.push(2);
    expect(copy.a.b).toHaveLength(2);
    expect(Object.isFrozen(copy) && Object.isFrozen(copy.a) && Object.isFrozen(copy.a.b) && Object.isFrozen(copy.a.b[1])).toBe(true);
  });
});

describe('snapshotJson properties', () => {
  it('round-trips every JSON value', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(snapshotJson(value, { label })).toEqual(JSON.parse(JSON.stringify(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('never throws anything but its own coded error', () => {
    fc.assert(
      fc.property(fc.anything({ withBigInt: true, withDate: true, withMap: true, withSet: true, withTypedArray: true, withSparseArray: true, withBoxedValues: true, withNullPrototype: true }), (value) => {
        try {
          snapshotJson(value, { label });
        } catch (error) {
          expect(AirlockError.isInstance(error) && error.code === 'NOT_LOSSLESS_JSON').toBe(true);
        }
      }),
      { numRuns: 500 },
    );
  });
});
