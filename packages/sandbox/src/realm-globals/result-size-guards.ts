// Some builtins size an array from their input in one go, and V8 answers an array past its
// maximum length (2^27 - 2 elements) with a fatal error that aborts the whole sandbox
// process at once: no heap limit, watchdog or catastrophe handler sees it coming, so every
// neighbour's call in flight dies with it and nobody is named. A string
// of 2^27 characters costs a plugin nothing (s += s, 27 times, makes a rope of a few
// bytes), and `s.split('')`, `s.split('x')`, `s.replace(/x/g, fn)` or a JSON.parse of
// '[0,0,...]' did it from a 64 MiB plugin with no grant. Each now refuses such an input
// with a RangeError first. MAX_RESULT_ELEMENTS is well below V8's limit and already
// 512 MiB of array, the largest memory limit a plugin can have, so nothing that could
// succeed is refused; below it, the builtins are called as they are.
//
// Installed before anything in the realm captures a built-in (install.ts), so the built-ins
// the helpers and the bootstrap capture, and those the random part checks for changes, are
// the guarded ones.
import type { IcuArgumentCheck, Kind } from './icu-argument-guards.js';

const MAX_RESULT_ELEMENTS = 2 ** 26;

/** Characters String.prototype.normalize may make: 32 MiB of UTF-16, its ICU memory a few times that. */
const MAX_NORMALIZED_CHARS = 2 ** 24;

/** Characters a locale-sensitive comparison or case mapping may copy into ICU: 32 MiB of UTF-16. */
const MAX_ICU_TEXT_CHARS = 2 ** 24;

/** `icuArguments`: the realm's check of locale lists and options (icu-argument-guards.ts), for the locale-sensitive String methods wrapped here. */
export function guardResultSizes(icuArguments: IcuArgumentCheck): void {
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const indexOf = String.prototype.indexOf;
  const RangeErrorIntrinsic = RangeError;
  const TypeErrorIntrinsic = TypeError;
  const tooManyElements = (what: string): Error => new RangeErrorIntrinsic(what + ': the result would have more than ' + MAX_RESULT_ELEMENTS + ' elements, more than V8 can make');
  /** Occurrences of `part` (not empty) in `text`, counted until there are `stopAt`. */
  const occurrences = (text: string, part: string, stopAt: number): number => {
    let count = 0;
    for (let at = apply(indexOf, text, [part]) as number; at !== -1 && count < stopAt; at = apply(indexOf, text, [part, at + part.length]) as number) count += 1;
    return count;
  };

  const stringPrototype = String.prototype as unknown as Record<string | symbol, unknown>;
  const nativeSplit = stringPrototype.split as (...args: unknown[]) => unknown;
  const splitSymbol = Symbol.split;
  const createNull = Object.create as (prototype: null) => Record<PropertyKey, unknown>;
  const separatorOf = (part: string): Record<PropertyKey, unknown> => {
    const separator = createNull(null);
    separator[splitSymbol] = undefined;
    separator.toString = () => part;
    return separator;
  };
  // The spec's own steps, so each of the caller's values is read or converted once: a
  // getter that answered our check one way and V8 another would reach the native split.
  defineProperty(stringPrototype, 'split', { value: { split(this: unknown, separator: unknown, limit: unknown): unknown {
    if (this === undefined || this === null) return apply(nativeSplit, this, [separator, limit]);
    if (separator !== undefined && separator !== null) {
      const splitter = (separator as Record<symbol, unknown>)[splitSymbol];
      if (splitter !== undefined && splitter !== null) {
        if (typeof splitter !== 'function') throw new TypeErrorIntrinsic('Symbol.split of the separator is not a function');
        return apply(splitter, separator, [this, limit]);
      }
    }
    const text = `${this as string}`;
    const most = limit === undefined ? 4294967295 : (limit as number) >>> 0;
    const part = separator === undefined ? undefined : `${separator as string}`;
    if (text.length >= MAX_RESULT_ELEMENTS && part !== undefined && most > MAX_RESULT_ELEMENTS) {
      const elements = part === '' ? text.length : occurrences(text, part, MAX_RESULT_ELEMENTS) + 1;
      if (elements > MAX_RESULT_ELEMENTS) throw tooManyElements('String.prototype.split');
    }
    // A primitive separator is passed as it came (V8 looks for String.prototype[Symbol.split] on
    // it, as natively); an object one, already converted, as an object with nothing to find on
    // it and no prototype a plugin could have given another answer: it converts to `part`.
    return apply(nativeSplit, text, [typeof separator === 'object' || typeof separator === 'function' ? separatorOf(part as string) : part, most]);
  } }.split, writable: true, enumerable: false, configurable: true });

  // normalize builds its result in ICU's memory, which no heap limit counts: U+FDFA is 18
  // characters under NFKC and NFKD, so normalizing a rope of 2^25 of them (a few bytes of
  // heap) grew a sandbox process past 2 GiB and took its neighbours' calls down (an outside
  // attacker's find). A text whose result could pass MAX_NORMALIZED_CHARS is refused, by the
  // form's largest expansion in UTF-16 (Unicode UAX #15: NFC 3x, NFD 4x, NFKC and NFKD 18x).
  const nativeNormalize = stringPrototype.normalize as (...args: unknown[]) => unknown;
  // Parameters past the native length come through a rest parameter, so the length is the native one's.
  defineProperty(stringPrototype, 'normalize', { value: { normalize(this: unknown, ...rest: unknown[]): unknown {
    const form = rest[0];
    if (this === undefined || this === null) return apply(nativeNormalize, this, [form]);
    const text = `${this as string}`;
    const name = form === undefined ? 'NFC' : `${form as string}`;
    const growth = name === 'NFC' ? 3 : name === 'NFD' ? 4 : name === 'NFKC' || name === 'NFKD' ? 18 : 1;
    if (text.length * growth > MAX_NORMALIZED_CHARS) {
      throw new RangeErrorIntrinsic('String.prototype.normalize: the ' + name + ' form of a text of ' + text.length + ' characters could have more than ' + MAX_NORMALIZED_CHARS + ' characters, whose memory the heap limit does not count: normalize it in parts');
    }
    return apply(nativeNormalize, text, [name]);
  } }.normalize, writable: true, enumerable: false, configurable: true });

  // localeCompare and the locale case mappings copy their texts into ICU's memory (2 bytes a
  // character), which no heap limit counts: a 64 MiB plugin made a rope of 2^29 - 100
  // two-byte characters, compared it (V8 flattens it into 1 GiB, one allocation past the heap
  // limit), and ICU's copy took its sandbox process past 2 GiB and a neighbour tenant's call
  // with it (an outside attacker's find). Texts past MAX_ICU_TEXT_CHARS in all are refused.
  // Intl.Collator's compare is guarded beside the other Intl wrappers (realm-bootstrap.ts).
  const LOCALES_AND_OPTIONS: readonly Kind[] = ['locales', 'options'];
  const LOCALES: readonly Kind[] = ['locales'];
  const refuseLongIcuText = (what: string, characters: number): void => {
    if (characters > MAX_ICU_TEXT_CHARS) throw new RangeErrorIntrinsic(what + ': the texts hold ' + characters + ' characters, more than ' + MAX_ICU_TEXT_CHARS + ', whose copies in ICU the heap limit does not count');
  };
  const nativeLocaleCompare = stringPrototype.localeCompare as (...args: unknown[]) => unknown;
  defineProperty(stringPrototype, 'localeCompare', { value: { localeCompare(this: unknown, that: unknown, ...rest: unknown[]): unknown {
    const locales = rest[0];
    const options = rest[1];
    if (this === undefined || this === null) return apply(nativeLocaleCompare, this, [that, locales, options]);
    const text = `${this as string}`;
    const other = `${that as string}`;
    refuseLongIcuText('String.prototype.localeCompare', text.length + other.length);
    const checked = icuArguments([locales, options], LOCALES_AND_OPTIONS);
    return apply(nativeLocaleCompare, text, [other, checked[0], checked[1]]);
  } }.localeCompare, writable: true, enumerable: false, configurable: true });
  for (const name of ['toLocaleUpperCase', 'toLocaleLowerCase']) {
    const native = stringPrototype[name] as (...args: unknown[]) => unknown;
    defineProperty(stringPrototype, name, { value: { [name](this: unknown, ...rest: unknown[]): unknown {
      const locales = rest[0];
      if (this === undefined || this === null) return apply(native, this, [locales]);
      const text = `${this as string}`;
      refuseLongIcuText('String.prototype.' + name, text.length);
      return apply(native, text, icuArguments([locales], LOCALES));
    } }[name], writable: true, enumerable: false, configurable: true });
  }

  // A global RegExp with a function replacer gathers every match before it calls the function
  // (String.prototype.replace and replaceAll come here too). Any function replacer on such a
  // text is refused, global or not: the flags are the plugin's to answer, and could answer twice.
  const regExpPrototype = RegExp.prototype as unknown as Record<symbol, unknown>;
  const nativeReplace = regExpPrototype[Symbol.replace] as (...args: unknown[]) => unknown;
  defineProperty(regExpPrototype, Symbol.replace, { value: { [Symbol.replace](this: unknown, string: unknown, replaceValue: unknown): unknown {
    if ((typeof this !== 'object' && typeof this !== 'function') || this === null) return apply(nativeReplace, this, [string, replaceValue]);
    const text = `${string as string}`;
    if (text.length >= MAX_RESULT_ELEMENTS && typeof replaceValue === 'function') throw tooManyElements('RegExp.prototype[Symbol.replace] with a function');
    return apply(nativeReplace, this, [text, replaceValue]);
  } }[Symbol.replace], writable: true, enumerable: false, configurable: true });

  // An array's elements take at least two characters each ("0,"), and a text's commas bound
  // them (every comma counts, in strings too: a text this long with that many is refused).
  const jsonObject = JSON as unknown as Record<string, unknown>;
  const nativeParse = JSON.parse;
  defineProperty(jsonObject, 'parse', { value: { parse(text: unknown, reviver?: unknown): unknown {
    const source = `${text as string}`;
    if (source.length >= 2 * MAX_RESULT_ELEMENTS && occurrences(source, ',', MAX_RESULT_ELEMENTS) >= MAX_RESULT_ELEMENTS) throw tooManyElements('JSON.parse');
    return apply(nativeParse, jsonObject, [source, reviver]);
  } }.parse, writable: true, enumerable: false, configurable: true });

  // Sorting sizes its work array from `length` alone: `Array.prototype.sort.call({ length: 2 ** 27 })`
  // needs no memory to ask, and V8 runs out of memory past recovery (a catastrophe: its process
  // retires, or aborts in the in-process mode). A length past the bound is refused, a real
  // array's too: a sparse one costs nothing (`a.length = 2 ** 32 - 1`), and V8 sorts it for
  // minutes, past the kill, until isolated-vm gives up on the isolate.
  //
  // Only a real array's length is a plain value. Anything else can answer the check one way and
  // V8 another (a getter, a valueOf, a Proxy's get trap; and a Proxy of an array passes
  // Array.isArray), so V8 is given the receiver behind a proxy of ours that answers the
  // length the check read: the one read the spec makes, made once. A primitive is answered as
  // it was read (it converts the same way twice, and a frozen length must read the same);
  // anything else as the number it converted to. Accessors see the receiver itself, never our
  // proxy. The realm's Proxy records the proxies it makes, so a Proxy of an array is told
  // from the array.
  const arrayPrototype = Array.prototype as unknown as Record<string, unknown>;
  const isArray = Array.isArray;
  const NativeProxy = Proxy;
  const construct = Reflect.construct;
  const get = Reflect.get;
  const set = Reflect.set;
  const proxies = new WeakSet<object>();
  const track = WeakSet.prototype.add;
  const tracked = WeakSet.prototype.has;
  const toObject = Object as (value: unknown) => object;
  const nativeRevocable = NativeProxy.revocable;
  defineProperty(NativeProxy, 'revocable', { value: { revocable(target: object, handler: ProxyHandler<object>): { proxy: object; revoke: () => void } {
    const made = nativeRevocable(target, handler);
    apply(track, proxies, [made.proxy]);
    return made;
  } }.revocable, writable: true, enumerable: false, configurable: true });
  const constructHandler = createNull(null) as unknown as ProxyHandler<ProxyConstructor>;
  constructHandler.construct = (target, args, newTarget) => {
    const made = construct(target, args, newTarget) as object;
    apply(track, proxies, [made]);
    return made;
  };
  defineProperty(globalThis, 'Proxy', { value: new NativeProxy(NativeProxy, constructHandler), writable: true, enumerable: false, configurable: true });
  const isPlainArray = (receiver: unknown): boolean => isArray(receiver) && !(apply(tracked, proxies, [receiver]) as boolean);
  /** The receiver as an object whose `length` reads `length` and nothing else. */
  const pinned = (receiver: object, length: unknown): object => {
    const handler = createNull(null) as unknown as ProxyHandler<object>;
    handler.get = (target, key) => (key === 'length' ? length : get(target, key, target));
    handler.set = (target, key, value) => set(target, key, value, target);
    return new NativeProxy(receiver, handler);
  };
  /** The receiver's length, read once: as read if a primitive, else as converted; and its value as a number. */
  const readLength = (receiver: object): { readonly raw: unknown; readonly length: number } => {
    const raw = (receiver as { length?: unknown }).length;
    const length = +(raw as number);
    return { raw: (typeof raw === 'object' && raw !== null) || typeof raw === 'function' ? length : raw, length };
  };

  const nativeSort = arrayPrototype.sort as (...args: unknown[]) => unknown;
  defineProperty(arrayPrototype, 'sort', { value: { sort(this: unknown, compare: unknown): unknown {
    const checked = (compare === undefined || typeof compare === 'function') && this !== undefined && this !== null;
    if (!checked) return apply(nativeSort, this, [compare]);
    if (isPlainArray(this)) {
      if ((this as unknown[]).length > MAX_RESULT_ELEMENTS) throw tooManyElements('Array.prototype.sort');
      return apply(nativeSort, this, [compare]);
    }
    const object = toObject(this);
    const { raw, length } = readLength(object);
    if (length > MAX_RESULT_ELEMENTS) throw tooManyElements('Array.prototype.sort');
    apply(nativeSort, pinned(object, raw), [compare]);
    return object;
  } }.sort, writable: true, enumerable: false, configurable: true });
  const nativeToSorted = arrayPrototype.toSorted as ((...args: unknown[]) => unknown) | undefined;
  if (typeof nativeToSorted === 'function') {
    defineProperty(arrayPrototype, 'toSorted', { value: { toSorted(this: unknown, compare: unknown): unknown {
      const checked = (compare === undefined || typeof compare === 'function') && this !== undefined && this !== null;
      if (!checked) return apply(nativeToSorted, this, [compare]);
      if (isPlainArray(this)) {
        if ((this as unknown[]).length > MAX_RESULT_ELEMENTS) throw tooManyElements('Array.prototype.toSorted');
        return apply(nativeToSorted, this, [compare]);
      }
      const object = toObject(this);
      const { raw, length } = readLength(object);
      if (length > MAX_RESULT_ELEMENTS) throw tooManyElements('Array.prototype.toSorted');
      return apply(nativeToSorted, pinned(object, raw), [compare]);
    } }.toSorted, writable: true, enumerable: false, configurable: true });
  }
}
