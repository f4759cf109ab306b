// Locale tags and option strings reach ICU as C strings: V8 copies each into memory no heap
// limit counts (up to 3 bytes a character), after flattening it (one allocation, which the
// heap limit lets overshoot). A 64 MiB plugin made a rope of 2^29 characters for a few
// bytes of heap and passed it as a tag to Intl.getCanonicalLocales, new Intl.Locale,
// supportedLocalesOf or toLocaleString, or as a DateTimeFormat's timeZone, and took its
// sandbox process past its 2 GiB ceiling and neighbour tenants' calls with it (an outside
// attacker's find). So, everywhere a locale list or an options object goes in:
// - a locale list is read once, as the spec reads it (a string, an Intl.Locale, or a list
//   of either), into a fresh array of at most MAX_TAG_CHARS characters in all;
// - an options object is read through a proxy that refuses a string past MAX_OPTION_CHARS,
//   and hands V8 an object value as one that converts through the original once and is
//   checked the same way;
// - a text a method hands ICU as a name (DisplayNames.of's code, RelativeTimeFormat's
//   unit, supportedValuesOf's key) is converted once and checked the same way.
// The check is made once per realm (icuArgumentCheck) and used where each built-in is
// wrapped anyway: the Intl constructors and their supportedLocalesOf by the bootstrap (which
// replaces them to count ICU objects; it takes the check from ICU_ARGUMENTS_GLOBAL and
// deletes it before plugin code runs), localeCompare and the locale case mappings by the
// result size guards, and the rest here. Wrapping each built-in once keeps a realm's build
// cheap: a defineProperty on a built-in costs a few microseconds, in every new realm.

/** A locale list's characters in all: a real list is a few dozen tags of a few dozen characters. */
const MAX_TAG_CHARS = 65536;
/** One option's, or one name's, characters: real ones are short (time zone, unit, currency names). */
const MAX_OPTION_CHARS = 65536;

export type Kind = 'locales' | 'tag' | 'options' | 'name' | 'any';

/** Checks (and replaces, in place) the arguments a built-in is given, by each argument's kind. */
export type IcuArgumentCheck = (args: unknown[], kinds: readonly Kind[]) => unknown[];

/** Where install.ts leaves the realm's check for the bootstrap, which takes and deletes it. */
export const ICU_ARGUMENTS_GLOBAL = '__airlock_icu_arguments';

/** The realm's check, built from the intrinsics as they are now, before any plugin code. */
export function icuArgumentCheck(): IcuArgumentCheck {
  const intl = (globalThis as unknown as { Intl?: Record<string, unknown> }).Intl;
  const apply = Reflect.apply;
  const get = Reflect.get;
  const defineProperty = Object.defineProperty;
  const createNull = Object.create as (prototype: null) => Record<PropertyKey, unknown>;
  const NativeProxy = Proxy;
  const ArrayIntrinsic = Array;
  const RangeErrorIntrinsic = RangeError;
  const TypeErrorIntrinsic = TypeError;
  const toPrimitiveSymbol = Symbol.toPrimitive;
  const floor = Math.floor;
  const Locale = intl?.Locale as { prototype: object } | undefined;
  const localeToString = Locale === undefined ? undefined : (Locale.prototype as { toString: () => string }).toString;

  const tooLong = (what: string, characters: number, most: number): Error => new RangeErrorIntrinsic('Intl: ' + what + ' of ' + characters + ' characters, more than ' + most + ', whose copies in ICU the heap limit does not count');
  /** A real Intl.Locale (its internal slot, not its prototype), whose tag was checked when it was made. */
  const isLocale = (value: unknown): boolean => {
    if (localeToString === undefined) return false;
    try {
      apply(localeToString, value, []);
      return true;
    } catch {
      return false;
    }
  };
  const isObject = (value: unknown): value is object => (typeof value === 'object' && value !== null) || typeof value === 'function';

  /** A locale list as CanonicalizeLocaleList reads it, once, into an array V8 reads with no code of the plugin's in the way. */
  const checkedLocales = (locales: unknown): unknown => {
    if (typeof locales === 'string') {
      if (locales.length > MAX_TAG_CHARS) throw tooLong('a locale tag', locales.length, MAX_TAG_CHARS);
      return locales;
    }
    if (!isObject(locales) || isLocale(locales)) return locales; // undefined, or what V8 refuses or reads safely
    const list = locales as Record<PropertyKey, unknown>;
    const raw = +(list.length as number);
    const length = raw > 0 ? (raw === Infinity ? 2 ** 53 - 1 : floor(raw)) : 0;
    const copy = new ArrayIntrinsic() as unknown[];
    let characters = 0;
    for (let index = 0, kept = 0; index < length; index += 1) {
      if (!(index in list)) continue;
      const item = list[index];
      if (typeof item !== 'string' && !isObject(item)) throw new TypeErrorIntrinsic('Intl: a locale must be a string or an Intl.Locale');
      const tag = typeof item === 'string' || isLocale(item) ? item : `${item as unknown as string}`;
      characters += typeof tag === 'string' ? tag.length : (apply(localeToString as () => string, tag, []) as string).length;
      if (characters > MAX_TAG_CHARS) throw tooLong('a locale list', characters, MAX_TAG_CHARS);
      // A descriptor without a prototype: plugin code may have put `get` on Object.prototype.
      const element = createNull(null);
      element.value = tag;
      element.writable = true;
      element.enumerable = true;
      element.configurable = true;
      defineProperty(copy, kept, element as PropertyDescriptor);
      kept += 1;
    }
    return copy;
  };

  /** A string checked, or an object that converts through `value` once and is checked. */
  const checkedOptionValue = (value: unknown, what: string): unknown => {
    if (typeof value === 'string') {
      if (value.length > MAX_OPTION_CHARS) throw tooLong(what, value.length, MAX_OPTION_CHARS);
      return value;
    }
    if (!isObject(value)) return value;
    const converting = createNull(null);
    converting[toPrimitiveSymbol] = (hint: string): unknown => {
      const primitive = hint === 'number' ? +(value as unknown as number) : hint === 'string' ? `${value as unknown as string}` : (value as { valueOf(): unknown }) + '';
      return checkedOptionValue(primitive, what);
    };
    return converting;
  };

  const optionsHandler = createNull(null) as ProxyHandler<object>;
  optionsHandler.get = (target, key) => checkedOptionValue(get(target, key, target), typeof key === 'string' ? 'the option ' + key : 'an option');
  const checkedOptions = (options: unknown): unknown => (isObject(options) ? new NativeProxy(options, optionsHandler) : options);

  return (args: unknown[], kinds: readonly Kind[]): unknown[] => {
    for (let index = 0; index < kinds.length && index < args.length; index += 1) {
      const kind = kinds[index];
      const value = args[index];
      if (kind === 'locales') args[index] = checkedLocales(value);
      else if (kind === 'options') args[index] = checkedOptions(value);
      else if (kind === 'tag') args[index] = typeof value === 'string' || !isObject(value) || isLocale(value) ? checkedLocales(value) : checkedLocales(`${value as unknown as string}`);
      else if (kind === 'name') args[index] = typeof value === 'string' ? checkedOptionValue(value, 'a name') : value === undefined ? value : checkedOptionValue(`${value as string}`, 'a name');
    }
    return args;
  };
}

/**
 * Wraps the built-ins that take locale lists, options or names and that nothing else in the
 * realm wraps: the Intl statics and methods below, and every toLocaleString.
 */
export function guardIcuArguments(checked: IcuArgumentCheck): void {
  const intl = (globalThis as unknown as { Intl?: Record<string, unknown> }).Intl;
  const apply = Reflect.apply;
  const defineProperty = Object.defineProperty;
  const getPrototypeOf = Object.getPrototypeOf;
  const isObject = (value: unknown): value is object => (typeof value === 'object' && value !== null) || typeof value === 'function';
  const guardMethod = (owner: Record<PropertyKey, unknown> | undefined, name: string, kinds: readonly Kind[]): void => {
    const method = owner?.[name];
    if (owner === undefined || typeof method !== 'function') return;
    const guarded = { [name](this: unknown, ...args: unknown[]): unknown {
      return apply(method as (...a: unknown[]) => unknown, this, checked(args, kinds));
    } }[name] as (...args: unknown[]) => unknown;
    // A rest parameter makes the length 0, as every toLocaleString's is: only others need it set.
    if ((method as { length: number }).length !== 0) defineProperty(guarded, 'length', { value: (method as { length: number }).length, configurable: true });
    // Assigned (a built-in method is writable and stays non-enumerable): cheaper than a
    // defineProperty, in every new realm; no plugin code has run yet to put a setter in the way.
    owner[name] = guarded;
  };
  if (intl !== undefined) {
    guardMethod(intl, 'getCanonicalLocales', ['locales']);
    guardMethod(intl, 'supportedValuesOf', ['name']);
    guardMethod((intl.DisplayNames as { prototype?: Record<PropertyKey, unknown> } | undefined)?.prototype, 'of', ['name']);
    const relativeTime = (intl.RelativeTimeFormat as { prototype?: Record<PropertyKey, unknown> } | undefined)?.prototype;
    guardMethod(relativeTime, 'format', ['any', 'name']);
    guardMethod(relativeTime, 'formatToParts', ['any', 'name']);
  }
  // The built-ins that take a locale list and options outside Intl (String's are the result
  // size guards').
  const typedArrayPrototype = getPrototypeOf(Int8Array.prototype) as Record<PropertyKey, unknown>;
  for (const prototype of [Number.prototype, BigInt.prototype, Array.prototype, typedArrayPrototype] as unknown as Record<PropertyKey, unknown>[]) guardMethod(prototype, 'toLocaleString', ['locales', 'options']);
  for (const name of ['toLocaleString', 'toLocaleDateString', 'toLocaleTimeString']) guardMethod(Date.prototype as unknown as Record<PropertyKey, unknown>, name, ['locales', 'options']);
  // Where V8 ships Temporal (Node 26), its types format by locale too.
  const temporal = (globalThis as unknown as { Temporal?: Record<string, unknown> }).Temporal;
  if (temporal !== undefined) {
    for (const name of Object.getOwnPropertyNames(temporal)) {
      const type = temporal[name] as { prototype?: unknown } | undefined;
      if (typeof type === 'function' && isObject(type.prototype)) guardMethod(type.prototype as Record<PropertyKey, unknown>, 'toLocaleString', ['locales', 'options']);
    }
  }
}
