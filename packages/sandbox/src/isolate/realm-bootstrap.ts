// The code that runs first in every realm, before any plugin code. The host sends it as
// text (`realmBootstrap.toString()`), so it is a real, linted and type-checked function
// that must reference nothing outside itself: no imports, no module constants.
//
// What it guarantees inside the realm:
// - intrinsics are captured before plugin code loads, so a plugin that replaces JSON,
//   Promise.prototype or Object.prototype.toJSON changes nothing the bootstrap relies on;
// - plugin code never sees the host: the host function (an isolated-vm Callback, which
//   takes no options from inside the realm) stays in this closure, and only plain strings
//   and numbers go out through it;
// - nothing can schedule plugin code for later on its own: FinalizationRegistry callbacks,
//   WebAssembly's async compilers and Atomics.waitAsync are removed, so plugin code runs
//   only inside a task the host started for a live call;
// - a call's outcome leaves as (kind, payload) strings the bootstrap chose, never as an
//   object the plugin could shape, and the result's size is bounded while it is serialized.

/**
 * The one host function a realm reaches: an isolated-vm Callback in "ignored" mode, which
 * queues the call on the host's thread, copies its arguments and returns undefined at once.
 */
type HostFunction = (kind: string, token: string, a: string | number, b?: string, c?: string) => void;

/** What the host calls in a realm: a call, a classification, a description, or a capability answer. */
type RealmEntry = (mode: string, a: unknown, b: unknown, c: unknown, d: unknown, e: unknown) => string | undefined;

interface Waiter {
  readonly resolve: (value: unknown) => void;
  readonly reject: (error: unknown) => void;
  readonly name: string;
  /** The call that asked: its answer is handed over only while that call's tool runs. */
  readonly token: string;
}

type Descriptor = Record<string, unknown>;

/**
 * What one call may send the host, as live-call.ts bounds it there: lines of console and their
 * UTF-16 units; capability requests in all, at once, and the units those in flight carry.
 */
export interface CallBounds {
  readonly logLines: number;
  readonly logUnits: number;
  readonly requests: number;
  readonly inFlight: number;
  readonly unitsInFlight: number;
  /** Objects and arrays one result or capability request may hold (json-containers.ts). */
  readonly resultContainers: number;
}

export function realmBootstrap(hostGlobal: string, linkGlobal: string, capabilityNamesJson: string, maxCapabilityBytes: number, grantWebAssembly: boolean, grantSharedArrayBuffer: boolean, wasmObjectsPerRealm: number, strictResults: boolean, callBoundsJson: string): RealmEntry {
  'use strict';
  const g = globalThis as unknown as Record<string, unknown>;
  const apply = Reflect.apply;
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const isArray = Array.isArray;
  const createNull = Object.create as (proto: null) => Record<string, unknown>;
  const defineProperty = Object.defineProperty;
  const freeze = Object.freeze;
  const objectKeys = Object.keys;
  const getPrototypeOf = Object.getPrototypeOf;
  const getOwnPropertySymbols = Object.getOwnPropertySymbols;
  const ObjectPrototype = Object.prototype;
  const charCodeAt = String.prototype.charCodeAt;
  const sliceString = String.prototype.slice;
  const numberToString = Number.prototype.toString;
  const isFinite = Number.isFinite;
  const WeakSetIntrinsic = WeakSet;
  const weakSetHas = WeakSet.prototype.has;
  const weakSetAdd = WeakSet.prototype.add;
  const PromiseIntrinsic = Promise;
  const ErrorIntrinsic = Error;
  const TypeErrorIntrinsic = TypeError;
  const MAX_MESSAGE = 2000;
  const MAX_SLICED = 1024 * 1024;
  const MAX_DESCRIBE_BYTES = 4 * 1024 * 1024;
  /** A tool's own field names reported for `airlock check` to warn of those nothing reads (names cut to 64). */
  const MAX_FIELD_NAMES = 32;

  // A Callback, not a Reference: it reads no options inside the realm (a Reference's
  // applyIgnored reads its options through the prototype chain), and it costs a new realm a
  // plain function instead of a Reference object (about 20 µs less per realm).
  const host = g[hostGlobal] as HostFunction;
  delete g[hostGlobal];
  const toHost = (args: (string | number | boolean)[]): void => {
    apply(host, undefined, args);
  };
  // Every message is copied and queued on the worker's thread before the host reads it, and
  // the host's bounds apply only then: a call is held to them here, before the copy. A plugin
  // that logged in a loop once queued gigabytes outside its heap and kept the thread that
  // enforces its limits busy (its CPU_LIMIT became a late TIMEOUT).
  const bounds = parse(callBoundsJson) as CallBounds;
  /** Refused early, as the result is serialized; the host counts again (json-containers.ts). */
  const TOO_MANY_CONTAINERS_MESSAGE = 'the result holds more than ' + bounds.resultContainers + ' objects and arrays';

  // Sources of plugin code that would run with no call around it.
  delete g.FinalizationRegistry;
  if (!grantWebAssembly) delete g.WebAssembly;
  else {
    const wasm = g.WebAssembly as Record<string, unknown>;
    delete wasm.compile;
    delete wasm.instantiate;
    delete wasm.compileStreaming;
    delete wasm.instantiateStreaming;
  }
  if (!grantSharedArrayBuffer) {
    delete g.SharedArrayBuffer;
    delete g.Atomics;
  } else {
    delete (g.Atomics as Record<string, unknown>).waitAsync;
  }

  /** The token of the call running now (set while its tool runs), for the console and the ICU count. */
  let runningToken: string | undefined;

  const construct = Reflect.construct;
  const RangeErrorIntrinsic = RangeError;
  /**
   * Puts `replacement` where the constructor `name` of `owner` was, as the same constructor to
   * plugin code: its prototype (so instanceof and subclasses work), its statics, and the
   * prototype's `constructor`, so no path back to the original is left.
   */
  const replaceConstructor = (owner: Record<string, unknown>, name: string, Original: (...args: unknown[]) => unknown, replacement: (...args: unknown[]) => unknown, guardedStatics?: Record<string, (...args: unknown[]) => unknown>): void => {
    const prototype = (Original as unknown as { prototype: object }).prototype;
    defineProperty(replacement, 'prototype', { value: prototype, writable: false, enumerable: false, configurable: false });
    defineProperty(replacement, 'name', { value: name, configurable: true });
    defineProperty(replacement, 'length', { value: Original.length, configurable: true });
    const statics = Object.getOwnPropertyDescriptors(Original) as Record<string | symbol, PropertyDescriptor>;
    for (const key of Reflect.ownKeys(statics)) {
      if (key === 'prototype' || key === 'name' || key === 'length') continue;
      const descriptor = statics[key] as PropertyDescriptor;
      // A static method given in place of its own (of the same length and name).
      const guarded = typeof key === 'string' ? guardedStatics?.[key] : undefined;
      defineProperty(replacement, key, guarded === undefined ? descriptor : { ...descriptor, value: guarded });
    }
    defineProperty(prototype, 'constructor', { value: replacement, writable: true, enumerable: false, configurable: true });
    defineProperty(owner, name, { value: replacement, writable: true, enumerable: false, configurable: true });
  };

  // A resizable ArrayBuffer (and a growable SharedArrayBuffer) reserves its maxByteLength of
  // address space up front and commits memory as it grows, outside the allocator
  // isolated-vm counts: a 16 MiB plugin grew one to 1.3 GiB, and 32,000 reservations of
  // 4 GiB left the sandbox process no address space, so a neighbour's next allocation
  // aborted it. Only fixed-length buffers are offered; their memory counts.
  const fixedLengthOnly = (name: string): void => {
    const Original = g[name] as ((...args: unknown[]) => unknown) | undefined;
    if (typeof Original !== 'function') return;
    const fixed = function (this: unknown, ...args: unknown[]): unknown {
      if (new.target === undefined) return apply(Original, this, args);
      const options = args[1];
      // Read once, and the options never reach the real constructor: a getter cannot answer twice.
      if ((typeof options === 'object' && options !== null) || typeof options === 'function') {
        if ((options as { maxByteLength?: unknown }).maxByteLength !== undefined) throw new RangeErrorIntrinsic(name + ': resizable and growable buffers are not available in the sandbox (their memory would not count against the plugin\'s limit); allocate the size you need');
      }
      return construct(Original as unknown as new (...a: unknown[]) => unknown, [args[0]], new.target);
    };
    replaceConstructor(g, name, Original, fixed);
  };
  // A RegExp's pattern is parsed when it is made, and with the u or v flag V8 builds each
  // \p{...} class as a character set outside the heap (case-folded too with i): 50,000 copies
  // of `[\p{L}--[a-z]]` under `vi`, a few hundred KB of source, took 1.7 GB, and two such calls
  // took their sandbox process past its ceiling and a neighbour tenant's call with it (an
  // outside attacker's find). A pattern with more than MAX_PROPERTY_CLASSES of them is refused,
  // counted on the text V8 is then given (converted once, here). Literals are parsed with the
  // module, whose parser memory is bounded at load (realm.ts).
  const MAX_PROPERTY_CLASSES = 1000;
  const RegExpOriginal = g.RegExp as ((...args: unknown[]) => unknown) & { prototype: Record<string, unknown> };
  const stringIndexOf = String.prototype.indexOf;
  const regExpSource = (Object.getOwnPropertyDescriptor(RegExpOriginal.prototype, 'source') as PropertyDescriptor).get as () => string;
  const regExpCompile = RegExpOriginal.prototype.compile as ((...args: unknown[]) => unknown) | undefined;
  // V8's parser also builds a pattern's tree in zone memory, about 160 bytes a character: a
  // 16 MiB `.` pattern took a sandbox process past its ceiling (an outside attacker's find).
  const MAX_PATTERN_CHARS = 524288;
  const PROPERTY_ESCAPES: readonly string[] = ['\\p{', '\\P{'];
  /** The \\p{...} and \\P{...} escapes in `text`, counted until there are more than `most`. */
  const propertyClassesIn = (text: string, most: number): number => {
    let count = 0;
    // By index: a for-of would call Array.prototype[Symbol.iterator], which plugin code can replace.
    for (let which = 0; which < PROPERTY_ESCAPES.length && count <= most; which += 1) {
      const escape = PROPERTY_ESCAPES[which] as string;
      for (let at = apply(stringIndexOf, text, [escape]) as number; at !== -1 && count <= most; at = apply(stringIndexOf, text, [escape, at + 3]) as number) count += 1;
    }
    return count;
  };
  const refuseManyPropertyClasses = (source: string): void => {
    if (source.length > MAX_PATTERN_CHARS) throw new RangeErrorIntrinsic('RegExp: the pattern has ' + source.length + ' characters, more than ' + MAX_PATTERN_CHARS + ', whose parse the heap limit does not count');
    if (propertyClassesIn(source, MAX_PROPERTY_CLASSES) > MAX_PROPERTY_CLASSES) throw new RangeErrorIntrinsic('RegExp: the pattern holds more than ' + MAX_PROPERTY_CLASSES + ' \\p{...} classes, whose sets the heap limit does not count: use fewer');
  };
  /** The pattern as V8 will read it: a RegExp's own source (its internal slot, not a getter of the plugin's), else the text, converted once. */
  const patternText = (pattern: unknown): { text: string; given: unknown } => {
    try {
      return { text: apply(regExpSource, pattern, []) as string, given: pattern };
    } catch {
      const text = pattern === undefined ? '' : `${pattern as string}`;
      return { text, given: text };
    }
  };
  const checkedRegExp = function (this: unknown, pattern: unknown, flags: unknown): unknown {
    const { text, given } = patternText(pattern);
    refuseManyPropertyClasses(text);
    const args = flags === undefined ? [given] : [given, `${flags as string}`];
    return new.target === undefined ? apply(RegExpOriginal, this, args) : construct(RegExpOriginal as unknown as new (...a: unknown[]) => unknown, args, new.target);
  };
  replaceConstructor(g, 'RegExp', RegExpOriginal, checkedRegExp);
  if (typeof regExpCompile === 'function') {
    defineProperty(RegExpOriginal.prototype, 'compile', { value: { compile(this: unknown, pattern: unknown, flags: unknown): unknown {
      const { text, given } = patternText(pattern);
      refuseManyPropertyClasses(text);
      return apply(regExpCompile, this, flags === undefined ? [given] : [given, `${flags as string}`]);
    } }.compile, writable: true, enumerable: false, configurable: true });
  }

  // String.prototype.match, matchAll and search make a RegExp of a text inside V8, past the
  // constructor above: the text V8 would make one of is checked the same way (an outside
  // attacker made a 16 MiB pattern so, and a flagless one that split's species step then
  // rebuilt with the v flag, past the class count). What has its own matcher goes to it, as
  // the spec says, read once.
  const stringPrototype = String.prototype as unknown as Record<string, unknown>;
  for (const [name, symbol] of [['match', Symbol.match], ['matchAll', Symbol.matchAll], ['search', Symbol.search]] as const) {
    const native = stringPrototype[name] as (...args: unknown[]) => unknown;
    defineProperty(stringPrototype, name, { value: { [name](this: unknown, pattern: unknown): unknown {
      if (this === undefined || this === null || (pattern !== undefined && pattern !== null && (pattern as Record<symbol, unknown>)[symbol] !== undefined)) return apply(native, this, [pattern]);
      const text = pattern === undefined ? '' : `${pattern as string}`;
      refuseManyPropertyClasses(text);
      return apply(native, this, [text]);
    } }[name], writable: true, enumerable: false, configurable: true });
  }

  // Code made from text at run time (eval, new Function and its async and generator kinds) is
  // parsed into zone memory the heap limit does not count, about 280 bytes a character of
  // `{a},`: an 8 MiB source took a sandbox process past its ceiling and two neighbour tenants'
  // calls with it (an outside attacker's find; a module's text is bounded when it loads, in
  // realm.ts). Such text is refused past MAX_GENERATED_SOURCE_CHARS in all, and past the
  // pattern guard's \p{...} count, since regular expression literals in it compile later.
  // eval is replaced by a function, so a direct eval is an indirect one: it sees only globals.
  const MAX_GENERATED_SOURCE_CHARS = 524288;
  const refuseCostlySource = (what: string, texts: readonly unknown[]): string[] => {
    const converted: string[] = [];
    let characters = 0;
    for (let index = 0; index < texts.length; index += 1) {
      const text = `${texts[index] as string}`;
      characters += text.length;
      if (characters > MAX_GENERATED_SOURCE_CHARS) throw new RangeErrorIntrinsic(what + ': the source has more than ' + MAX_GENERATED_SOURCE_CHARS + ' characters, whose parse the heap limit does not count');
      converted[converted.length] = text;
    }
    let count = 0;
    for (let index = 0; index < converted.length; index += 1) {
      count += propertyClassesIn(converted[index] as string, MAX_PROPERTY_CLASSES - count);
      if (count > MAX_PROPERTY_CLASSES) throw new RangeErrorIntrinsic(what + ': the source holds more than ' + MAX_PROPERTY_CLASSES + ' \\p{...} classes, whose sets the heap limit does not count: use fewer');
    }
    return converted;
  };
  // Assigned where the built-in is writable, and defined only where it is not: a realm is
  // built for every fresh call, and each defineProperty on a built-in costs microseconds there.
  const evalOriginal = g.eval as (source: unknown) => unknown;
  g.eval = { eval(source: unknown): unknown {
    // Anything but a string is returned as it is, as eval does, unconverted.
    if (typeof source !== 'string') return source;
    return evalOriginal(refuseCostlySource('eval', [source])[0]);
  } }.eval;
  const functionPrototypes: readonly [string, object][] = [
    ['Function', Function.prototype],
    ['AsyncFunction', Object.getPrototypeOf(async function () {}) as object],
    ['GeneratorFunction', Object.getPrototypeOf(function* () {}) as object],
    ['AsyncGeneratorFunction', Object.getPrototypeOf(async function* () {}) as object],
  ];
  for (const [name, prototype] of functionPrototypes) {
    const Original = (prototype as { constructor: (...args: unknown[]) => unknown }).constructor;
    // A function expression under a computed key: named, constructible, and its `prototype` writable.
    const checked = { [name]: function (this: unknown, ...args: unknown[]): unknown {
      const texts = refuseCostlySource(name, args);
      return construct(Original as unknown as new (...a: unknown[]) => unknown, texts, new.target ?? Original);
    } }[name] as ((...args: unknown[]) => unknown) & { prototype: object };
    checked.prototype = prototype;
    // Function is a global too; the others are reached only through their prototypes' constructor
    // (read-only there, so defined).
    if (name === 'Function') {
      g.Function = checked;
      (prototype as { constructor: unknown }).constructor = checked;
    } else defineProperty(prototype, 'constructor', { value: checked, writable: false, enumerable: false, configurable: true });
  }

  fixedLengthOnly('ArrayBuffer');
  fixedLengthOnly('SharedArrayBuffer');

  // ICU objects hold native memory the isolate's heap limit does not count: a retained
  // Intl.DateTimeFormat about 26 KB beside a few bytes of heap, so 80,000 of them in a 64 MiB
  // isolate took its whole sandbox process (2 GiB) down, and every neighbour's call in it.
  // Each call (and the module's top level) may make MAX_ICU_OBJECTS of them; past that, a
  // RangeError that says why. The host hears how many native units (one per Intl object) each
  // call made, and replaces an isolate whose realms made too many (kept, or garbage its small
  // heap never collects).
  // Formatters made and dropped inside toLocaleString are not counted. V8's own
  // Intl.v8BreakIterator is not offered at all.
  const MAX_ICU_OBJECTS = 500;
  /** Made in the running call, against MAX_ICU_OBJECTS. */
  let icuObjects = 0;
  /** Native units made since the host was last told (the module's top level's go with the first call). */
  let nativeUnitsUntold = 0;
  /** `units`: one per object, more for one that copies a long text (about 80 KB a unit). */
  const countIcuObject = (units = 1): void => {
    icuObjects += units;
    nativeUnitsUntold += units;
    if (icuObjects > MAX_ICU_OBJECTS) throw new RangeErrorIntrinsic('Intl: this call made more than ' + MAX_ICU_OBJECTS + ' Intl objects, whose memory its heap limit does not count: make one and reuse it');
  };
  // The realm helpers' check of locale lists and options (realm-globals/icu-argument-guards.ts:
  // ICU copies them outside the heap), left on the global for this bootstrap, which wraps
  // the Intl constructors anyway; taken before any plugin code can see it.
  const icuArguments = g.__airlock_icu_arguments as ((args: unknown[], kinds: readonly string[]) => unknown[]) | undefined;
  delete g.__airlock_icu_arguments;
  if (typeof icuArguments !== 'function') throw new Error('airlock: the realm helpers were not installed before the bootstrap');
  const localesAndOptions = ['locales', 'options'] as const;
  const tagAndOptions = ['tag', 'options'] as const;
  const intl = g.Intl as Record<string, unknown> | undefined;
  if (intl !== undefined) {
    delete intl.v8BreakIterator;
    for (const name of Object.getOwnPropertyNames(intl)) {
      const original = intl[name];
      // Every constructor (a function with a prototype object); getCanonicalLocales and
      // supportedValuesOf make no ICU object.
      if (typeof original !== 'function' || typeof (original as { prototype?: unknown }).prototype !== 'object') continue;
      const Original = original as (...args: unknown[]) => unknown;
      const kinds = name === 'Locale' ? tagAndOptions : localesAndOptions;
      const counted = function (this: unknown, ...args: unknown[]): unknown {
        countIcuObject();
        icuArguments(args, kinds);
        // Called without new, these constructors make an object too.
        return new.target === undefined ? apply(Original, this, args) : construct(Original as unknown as new (...a: unknown[]) => unknown, args, new.target);
      };
      const supportedLocalesOf = (Original as unknown as { supportedLocalesOf?: (...args: unknown[]) => unknown }).supportedLocalesOf;
      // Its length is the native one's (1): the options come through the rest parameter.
      const statics = typeof supportedLocalesOf !== 'function' ? undefined : { supportedLocalesOf: { supportedLocalesOf(this: unknown, locales: unknown, ...more: unknown[]): unknown {
        return apply(supportedLocalesOf, this, icuArguments([locales, more[0]], localesAndOptions));
      } }.supportedLocalesOf };
      replaceConstructor(intl, name, Original, counted, statics);
    }
    // A segmenter makes an ICU break iterator per segment() and per iteration of its result,
    // each holding a copy of the text (2 bytes a character: 100 segment() of 4 million
    // characters held 812 MB), so a long text counts a unit per 40,960 characters.
    const Segmenter = intl.Segmenter as (new (...args: unknown[]) => { segment(text: string): object }) | undefined;
    if (typeof Segmenter === 'function') {
      const segmenterPrototype = Segmenter.prototype as unknown as Record<string, unknown>;
      const segment = segmenterPrototype.segment as (...args: unknown[]) => unknown;
      const WeakMapIntrinsic = WeakMap;
      const weakMapGet = WeakMap.prototype.get;
      const weakMapSet = WeakMap.prototype.set;
      const floor = Math.floor;
      const textUnits = new WeakMapIntrinsic<object, number>();
      defineProperty(segmenterPrototype, 'segment', { value: function segmentCounted(this: unknown, text: unknown): unknown {
        // Converted once, here, so the length counted is the text's that V8 copies.
        const string = typeof text === 'string' ? text : `${text as string}`;
        const units = 1 + floor(string.length / 40960);
        countIcuObject(units);
        const segments = apply(segment, this, [string]) as object;
        apply(weakMapSet, textUnits, [segments, units]);
        return segments;
      }, writable: true, enumerable: false, configurable: true });
      const segmentsPrototype = Object.getPrototypeOf(apply(segment, construct(Segmenter as unknown as new () => object, []), [''])) as Record<symbol, unknown>;
      const iterate = segmentsPrototype[Symbol.iterator] as (...args: unknown[]) => unknown;
      defineProperty(segmentsPrototype, Symbol.iterator, { value: function iterateCounted(this: unknown): unknown { countIcuObject((apply(weakMapGet, textUnits, [this]) as number | undefined) ?? 1); return apply(iterate, this, []); }, writable: true, enumerable: false, configurable: true });
    }
    // A locale's maximize() and minimize() make a new Intl.Locale without its constructor.
    const Locale = intl.Locale as ((new (...args: unknown[]) => object) & { prototype: Record<string, unknown> }) | undefined;
    if (typeof Locale === 'function') {
      for (const name of ['maximize', 'minimize']) {
        const method = Locale.prototype[name] as ((...args: unknown[]) => unknown) | undefined;
        if (typeof method !== 'function') continue;
        defineProperty(Locale.prototype, name, { value: { [name](this: unknown): unknown { countIcuObject(); return apply(method, this, []); } }[name], writable: true, enumerable: false, configurable: true });
      }
    }
    // A list formatter copies every item into ICU's memory and joins them there: 400 references
    // to one string of a million characters (a few MB of heap) made 800 MB outside the heap
    // limit, and two such calls took their sandbox process past its ceiling and a neighbour
    // tenant's call with it (an outside attacker's find). The items are read once, as the spec
    // reads them (an iterable of strings), and a list past MAX_ICU_LIST_CHARS is refused.
    const ListFormat = intl.ListFormat as ((new (...args: unknown[]) => object) & { prototype: Record<string, unknown> }) | undefined;
    if (typeof ListFormat === 'function') {
      const arrayFrom = Array.from;
      const MAX_ICU_LIST_CHARS = 16777216;
      for (const name of ['format', 'formatToParts']) {
        const method = ListFormat.prototype[name] as ((...args: unknown[]) => unknown) | undefined;
        if (typeof method !== 'function') continue;
        defineProperty(ListFormat.prototype, name, { value: { [name](this: unknown, list: unknown): unknown {
          const items = list === undefined ? [] : (apply(arrayFrom, undefined, [list]) as unknown[]);
          let characters = 0;
          for (let index = 0; index < items.length; index += 1) {
            const item = items[index];
            if (typeof item === 'string') characters += item.length;
          }
          if (characters > MAX_ICU_LIST_CHARS) throw new RangeErrorIntrinsic('Intl.ListFormat: the items hold ' + characters + ' characters, more than ' + MAX_ICU_LIST_CHARS + ', whose copies the heap limit does not count: format fewer or shorter items');
          return apply(method, this, [items]);
        } }[name], writable: true, enumerable: false, configurable: true });
      }
    }
    // A collator's compare copies both texts into ICU's memory, as localeCompare does
    // (result-size-guards.ts): texts past 2^24 characters in all are refused. Its getter
    // answers one function per collator, as the spec's bound compare is one.
    const Collator = intl.Collator as ((new (...args: unknown[]) => object) & { prototype: object }) | undefined;
    const compareGetter = typeof Collator === 'function' ? Object.getOwnPropertyDescriptor(Collator.prototype, 'compare')?.get : undefined;
    if (Collator !== undefined && compareGetter !== undefined) {
      const MAX_ICU_TEXT_CHARS = 16777216;
      const guarded = new WeakMap<object, (x: unknown, y: unknown) => number>();
      const guardedGet = WeakMap.prototype.get;
      const guardedSet = WeakMap.prototype.set;
      const getters = { get compare(): unknown {
        const native = apply(compareGetter, this, []) as (x: string, y: string) => number;
        let compare = apply(guardedGet, guarded, [native]) as ((x: unknown, y: unknown) => number) | undefined;
        if (compare === undefined) {
          compare = (x: unknown, y: unknown): number => {
            const first = `${x as string}`;
            const second = `${y as string}`;
            if (first.length + second.length > MAX_ICU_TEXT_CHARS) throw new RangeErrorIntrinsic('Intl.Collator compare: the texts hold ' + (first.length + second.length) + ' characters, more than ' + MAX_ICU_TEXT_CHARS + ', whose copies in ICU the heap limit does not count');
            return native(first, second);
          };
          apply(guardedSet, guarded, [native, compare]);
        }
        return compare;
      } };
      defineProperty(Collator.prototype, 'compare', { get: Object.getOwnPropertyDescriptor(getters, 'compare')?.get as () => unknown, enumerable: false, configurable: true });
    }
    icuObjects = 0;
    nativeUnitsUntold = 0;
  }

  // A WebAssembly memory reserves about 10 GiB of address space, committed or not, and is a
  // few bytes of heap: 13,000 of them from a 16 MiB warm plugin left its sandbox process no
  // room for another tenant's memory (resident memory 100 MiB, so no ceiling saw it). With
  // the grant, a realm may make wasmObjectsPerRealm memories and instances (an instance may
  // define its own) in its whole life, whatever runs then (a call, its leftover microtasks, a
  // classifier, the top level); the host counts every realm it builds as having made them all
  // (realm-supply.ts), so nothing here needs telling. A compiled module keeps a copy of its
  // bytes and its code outside the heap (260 modules of 8 MiB from one 16 MiB call took a
  // process past its ceiling): a realm may compile as many modules, each from bytes its heap
  // held, so a realm's modules hold a few times its memory limit at most.
  const wasm = g.WebAssembly as Record<string, unknown> | undefined;
  if (wasm !== undefined) {
    const made: Record<string, number> = createNull(null) as Record<string, number>;
    const what: Record<string, string> = { Memory: 'memories and instances', Instance: 'memories and instances', Module: 'modules' };
    for (const name of ['Memory', 'Instance', 'Module']) {
      const Original = wasm[name] as ((...args: unknown[]) => unknown) | undefined;
      if (typeof Original !== 'function') continue;
      const kind = what[name] as string;
      made[kind] = 0;
      const counted = function (this: unknown, ...args: unknown[]): unknown {
        if (new.target === undefined) return apply(Original, this, args);
        made[kind] = (made[kind] as number) + 1;
        if ((made[kind] as number) > wasmObjectsPerRealm) throw new RangeErrorIntrinsic('WebAssembly: this realm made more than ' + wasmObjectsPerRealm + ' ' + kind + ', whose memory its heap limit does not count: make one and reuse it');
        return construct(Original as unknown as new (...a: unknown[]) => unknown, args, new.target);
      };
      replaceConstructor(wasm, name, Original, counted);
    }
  }

  // console: each line goes to the host with the token of the call that is running, and is
  // dropped when none is (the host bounds how many lines and bytes one call may send).
  function formatLogArgument(value: unknown): string {
    if (typeof value === 'string') return value;
    if (value === null || (typeof value !== 'object' && typeof value !== 'function')) return String(value);
    try {
      const text = json(value);
      return typeof text === 'string' ? text : String(value);
    } catch {
      return '[unserializable]';
    }
  }
  /**
   * What the realm held back from the host for the call running now, only counted: console
   * lines past the bounds, and capability requests refused before their copy (the host counts
   * every request a call made). Each count is told as it reaches 1, 2, 4, 8... and the rest with
   * the outcome: a call killed in a loop is still known to have held back about as many as it did.
   */
  let heldToken: string | undefined;
  const held = { 'logs-dropped': 0, 'requests-refused': 0 };
  const heldTold = { 'logs-dropped': 0, 'requests-refused': 0 };
  type Held = keyof typeof held;
  function holdBack(token: string, kind: Held): void {
    // Only the running call's: the host drops a message for any other token, and counts kept
    // for two calls in turn would restart, and be told, at every step.
    if (token !== runningToken) return;
    if (token !== heldToken) {
      heldToken = token;
      held['logs-dropped'] = 0;
      held['requests-refused'] = 0;
      heldTold['logs-dropped'] = 0;
      heldTold['requests-refused'] = 0;
    }
    const count = held[kind] + 1;
    held[kind] = count;
    if ((count & (count - 1)) === 0) tellHeld(token, kind);
  }
  function tellHeld(token: string, kind: Held): void {
    if (token !== heldToken || held[kind] === heldTold[kind]) return;
    toHost([kind, token, held[kind] - heldTold[kind]]);
    heldTold[kind] = held[kind];
  }

  /** The console of the call running now: lines and units sent. */
  let logToken: string | undefined;
  let logLines = 0;
  let logUnits = 0;
  function logger(level: string): (...args: unknown[]) => void {
    return function (...args: unknown[]): void {
      const token = runningToken;
      if (token === undefined) return;
      if (token !== logToken) {
        logToken = token;
        logLines = 0;
        logUnits = 0;
      }
      if (logLines >= bounds.logLines || logUnits >= bounds.logUnits) return holdBack(token, 'logs-dropped');
      let line = '';
      for (let i = 0; i < args.length && line.length <= MAX_MESSAGE; i += 1) line += (i === 0 ? '' : ' ') + formatLogArgument(args[i]);
      const text = bounded(line);
      // Again: formatting ran the plugin's toJSON and getters, which may have logged meanwhile.
      if (logLines >= bounds.logLines || logUnits + text.length > bounds.logUnits) return holdBack(token, 'logs-dropped');
      logLines += 1;
      logUnits += text.length;
      toHost(['log', token, level, text]);
    };
  }
  const consoleObject = createNull(null);
  consoleObject.log = logger('info');
  consoleObject.info = logger('info');
  consoleObject.debug = logger('debug');
  consoleObject.warn = logger('warn');
  consoleObject.error = logger('error');
  defineProperty(g, 'console', { value: freeze(consoleObject), configurable: true, enumerable: false, writable: true });

  const capabilityNames = parse(capabilityNamesJson) as string[];
  // Capability requests this realm made that the host has not answered, by request id.
  const waiting = createNull(null) as unknown as Record<string, Waiter>;
  let nextRequest = 1;

  function json(value: unknown): string | undefined {
    return apply(stringify, undefined, [value]) as string | undefined;
  }

  function bounded(text: string): string {
    if (text.length <= MAX_MESSAGE) return text;
    // Slicing makes V8 flatten a rope first (up to 1 GiB past the heap limit): a string that
    // long is described, not cut.
    if (text.length > MAX_SLICED) return '(a string of ' + text.length + ' characters, not shown)';
    return (apply(sliceString, text, [0, MAX_MESSAGE]) as string) + '… (truncated)';
  }

  // Reads a thrown value's message without trusting it: getters and Proxies may throw or spin.
  function describeThrown(thrown: unknown): string {
    try {
      if (typeof thrown === 'string') return bounded(thrown);
      if (thrown !== null && typeof thrown === 'object') {
        const message = (thrown as { message?: unknown }).message;
        if (typeof message === 'string') return bounded(message);
      }
      return 'a non-Error value was thrown';
    } catch {
      return 'an unreadable error was thrown';
    }
  }

  /** UTF-8 bytes of `text` as a JSON string literal, quotes and escapes included; stops counting past `stopAt`. */
  function quotedBytes(text: string, stopAt: number): number {
    // Every character costs a byte at least: a string longer than the budget is over it
    // without reading one character (reading would make V8 flatten a rope first: a string
    // held as a few KiB of pieces becomes one allocation of up to 1 GiB, past the heap limit).
    if (text.length + 2 > stopAt) return text.length + 2;
    let bytes = 2;
    for (let i = 0; i < text.length && bytes <= stopAt; i += 1) {
      const c = apply(charCodeAt, text, [i]) as number;
      // JSON writes \b \t \n \f \r (and \" \\) in two bytes, the other controls as \u00XX.
      if (c === 0x22 || c === 0x5c || c === 0x08 || c === 0x09 || c === 0x0a || c === 0x0c || c === 0x0d) bytes += 2;
      else if (c < 0x20) bytes += 6;
      else if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff) {
        const next = apply(charCodeAt, text, [i + 1]) as number;
        if (next >= 0xdc00 && next <= 0xdfff) {
          bytes += 4;
          i += 1;
        } else bytes += 6;
      } else if (c >= 0xdc00 && c <= 0xdfff) bytes += 6;
      else bytes += 3;
    }
    return bytes;
  }

  /** UTF-8 bytes of `text`; stops counting past `stopAt`. */
  function utf8Bytes(text: string, stopAt: number): number {
    if (text.length > stopAt) return text.length;
    let bytes = 0;
    for (let i = 0; i < text.length && bytes <= stopAt; i += 1) {
      const c = apply(charCodeAt, text, [i]) as number;
      if (c < 0x80) bytes += 1;
      else if (c < 0x800) bytes += 2;
      else if (c >= 0xd800 && c <= 0xdbff) {
        bytes += 4;
        i += 1;
      } else bytes += 3;
    }
    return bytes;
  }

  const tooLarge = freeze(createNull(null));
  const tooManyContainers = freeze(createNull(null));
  /** Thrown by the result's serializer for a value JSON cannot carry; `notJsonReason` says which and where. */
  const notJson = freeze(createNull(null));
  let notJsonReason = '';

  /** Refuses the result: what is at `key` of `holder` (or the value itself, at the top) is not JSON. */
  function refuseNotJson(holder: object, key: string, top: boolean, what: string): never {
    const where = top ? 'the top' : isArray(holder) ? 'index ' + key : 'key ' + (apply(stringify, undefined, [key.length > 64 ? (apply(sliceString, key, [0, 64]) as string) + '…' : key]) as string);
    notJsonReason = what + ' at ' + where;
    throw notJson;
  }

  /** An oversized result, in words that name no limit (maxOutputBytes is the host's). */
  const TOO_LARGE_MESSAGE = 'the result is larger than this tool may return';

  /**
   * Serializes a result with its size counted as it is built, so an oversized value fails
   * before a copy of it is made: a 30 MiB string never gets its doubled JSON twin.
   */
  function encodeResult(value: unknown, maxBytes: number, strict: boolean): [kind: string, payload: string] {
    if (value === undefined) value = null;
    if (typeof value === 'string' && value.length > maxBytes) return ['OUTPUT_TOO_LARGE', TOO_LARGE_MESSAGE];
    let remaining = maxBytes;
    // Containers that already have an element written: the next one costs a comma.
    const started = new WeakSetIntrinsic<object>();
    let containers = 0;
    let atTop = true;
    const replacer = function (this: object, key: string, item: unknown): unknown {
      const top = atTop;
      atTop = false;
      let cost = 0;
      const kind = typeof item;
      // Strict: what JSON cannot carry is refused, not dropped or written as null as
      // JSON.stringify would, judged on the value after its toJSON; only a key whose value is
      // undefined is left out, as absent. Otherwise JSON.stringify's own rules.
      if (kind === 'string') cost = quotedBytes(item as string, remaining + 1);
      else if (kind === 'number') {
        if (isFinite(item as number)) cost = (apply(numberToString, item, []) as string).length;
        else if (strict) refuseNotJson(this, key, top, apply(numberToString, item, []) as string);
        else cost = 4;
      } else if (kind === 'boolean') cost = (item as boolean) ? 4 : 5;
      else if (item === null) cost = 4;
      else if (kind === 'object') {
        if (strict && !isArray(item)) {
          const proto: unknown = getPrototypeOf(item);
          if (proto !== ObjectPrototype && proto !== null) refuseNotJson(this, key, top, 'an object that is neither a plain object nor an array');
          if (getOwnPropertySymbols(item).length > 0) refuseNotJson(this, key, top, 'an object with a symbol-keyed property');
        }
        containers += 1;
        if (containers > bounds.resultContainers) throw tooManyContainers;
        cost = 2;
      } else if (kind === 'undefined' && !top && !isArray(this)) return item; // a key whose value is undefined is absent, strict or not
      else if (strict) refuseNotJson(this, key, top, kind === 'undefined' ? 'undefined' : kind === 'bigint' ? 'a BigInt' : 'a ' + kind);
      else if (isArray(this)) cost = 4; // undefined, a function or a symbol in an array is written as null
      else return item; // omitted, with its key
      if (key !== '' || isArray(this)) {
        // A key and its colon; a comma before every element but a container's first.
        if (!isArray(this)) cost += quotedBytes(key, remaining + 1) + 1;
        if (apply(weakSetHas, started, [this]) === true) cost += 1;
        else apply(weakSetAdd, started, [this]);
      }
      // Exactly the bytes written so far (toJSON and omitted keys aside): refused only past the limit.
      remaining -= cost;
      if (remaining < 0) throw tooLarge;
      return item;
    };
    let text: string | undefined;
    try {
      text = apply(stringify, undefined, [value, replacer]) as string | undefined;
    } catch (error) {
      if (error === tooLarge) return ['OUTPUT_TOO_LARGE', TOO_LARGE_MESSAGE];
      if (error === tooManyContainers) return ['OUTPUT_TOO_LARGE', TOO_MANY_CONTAINERS_MESSAGE];
      if (error === notJson) return ['INVALID_TOOL_OUTPUT', 'the result is not JSON: ' + notJsonReason];
      // The serializer's own refusals (cycles, BigInt) mean "not JSON"; anything else was thrown by the plugin's toJSON or getters.
      if (error instanceof TypeErrorIntrinsic) return ['INVALID_TOOL_OUTPUT', 'the result is not JSON (' + describeThrown(error) + ')'];
      // Nested past what V8's stack takes (about 10,000 levels): a value no JSON reader takes either.
      if (error instanceof RangeErrorIntrinsic && describeThrown(error) === 'Maximum call stack size exceeded') return ['INVALID_TOOL_OUTPUT', 'the result is not JSON: it is nested too deeply to serialize'];
      return ['TOOL_ERROR', 'serializing the result threw: ' + describeThrown(error)];
    }
    if (typeof text !== 'string') return ['INVALID_TOOL_OUTPUT', 'the result is not JSON'];
    if (text.length > maxBytes || (text.length * 3 > maxBytes && utf8Bytes(text, maxBytes) > maxBytes)) return ['OUTPUT_TOO_LARGE', TOO_LARGE_MESSAGE];
    return ['ok', text];
  }

  // Generic, coded, built in this realm: no host message, path or stack ever reaches the plugin.
  function capabilityError(name: string, code: string): Error {
    const what = code === 'NOT_GRANTED' ? ' is not granted' : code === 'TOO_LARGE' ? ': argument or answer too large' : code === 'TOO_MANY_REQUESTS' ? ': too many requests, or too much sent, in one call' : code === 'UNAVAILABLE' ? ' is unavailable' : ' failed';
    const error = new ErrorIntrinsic('capability ' + name + what);
    defineProperty(error, 'code', { value: code, enumerable: true });
    // The frames would be the bootstrap's own: nothing the plugin needs, nothing it should map.
    defineProperty(error, 'stack', { value: 'Error: capability ' + name + what, writable: true, configurable: true });
    return error;
  }

  /** One plain function per granted name; each request carries the token of the call that made this object. */
  function capabilitiesFor(token: string): Readonly<Record<string, (argument?: unknown) => Promise<unknown>>> {
    const capabilities = createNull(null) as Record<string, (argument?: unknown) => Promise<unknown>>;
    // This call's requests: made in all (refused for their number too, as the host counts
    // them), and those waiting for an answer with the units they carry. Past a bound, refused
    // before the copy.
    let made = 0;
    let inFlight = 0;
    let unitsInFlight = 0;
    const refuse = (name: string, reject: (error: unknown) => void): void => {
      made += 1;
      holdBack(token, 'requests-refused');
      reject(capabilityError(name, 'TOO_MANY_REQUESTS'));
    };
    for (let i = 0; i < capabilityNames.length; i += 1) {
      const name = capabilityNames[i] as string;
      capabilities[name] = function (argument?: unknown): Promise<unknown> {
        return new PromiseIntrinsic(function (resolve, reject) {
          // Counted while it is written, and refused past the host's limit before the copy
          // is made: a 60 MiB string argument once took its isolate past its heap, and V8
          // aborted the whole process over it.
          // Only the running call's own: a warm realm can keep every earlier call's object, each
          // with budgets of its own, and the host answers no ended call (it once took 48,000
          // copies in one call, left waiting for ever).
          if (token !== runningToken) return reject(capabilityError(name, 'UNAVAILABLE'));
          // Read by index, never destructured: `const [a, b] = ...` runs the array iterator the
          // plugin can replace on Array.prototype, which would hand back any string it likes.
          if (made >= bounds.requests || inFlight >= bounds.inFlight) return refuse(name, reject);
          const encoded = encodeResult(argument, maxCapabilityBytes, false);
          const kind = encoded[0];
          const text = encoded[1];
          // Refused here, never sent: the host never counted these.
          if (kind === 'OUTPUT_TOO_LARGE') return reject(capabilityError(name, 'TOO_LARGE'));
          if (kind !== 'ok') return reject(new TypeErrorIntrinsic('capability ' + name + ' takes a JSON value'));
          // The last word before the copy, on the string itself (a primitive: nothing to hook).
          if (typeof text !== 'string' || text.length > maxCapabilityBytes) return reject(capabilityError(name, 'TOO_LARGE'));
          // Again: serializing ran the plugin's toJSON and getters, which may have asked meanwhile.
          if (made >= bounds.requests || inFlight >= bounds.inFlight || unitsInFlight + text.length > bounds.unitsInFlight) return refuse(name, reject);
          made += 1;
          const id = nextRequest;
          nextRequest += 1;
          const units = text.length;
          inFlight += 1;
          unitsInFlight += units;
          const settled = (): void => {
            inFlight -= 1;
            unitsInFlight -= units;
          };
          waiting[id] = {
            resolve: (value) => {
              settled();
              resolve(value);
            },
            reject: (error) => {
              settled();
              reject(error);
            },
            name,
            token,
          };
          try {
            toHost(['capability', token, id, name, text]);
          } catch {
            delete waiting[id];
            settled();
            reject(capabilityError(name, 'UNAVAILABLE'));
          }
        });
      };
    }
    return freeze(capabilities);
  }

  function toolsOf(namespace: Record<string, unknown>): unknown[] {
    const plugin = namespace.default as { tools?: unknown } | null | undefined;
    const tools = plugin !== null && typeof plugin === 'object' ? plugin.tools : undefined;
    if (!isArray(tools)) throw new TypeErrorIntrinsic('the default export must be { tools: [...] }');
    return tools;
  }

  function find(namespace: Record<string, unknown>, name: string): Record<string, unknown> | undefined {
    const tools = toolsOf(namespace);
    for (let i = 0; i < tools.length; i += 1) {
      const tool = tools[i] as Record<string, unknown> | null;
      if (tool !== null && typeof tool === 'object' && tool.name === name) return tool;
    }
    return undefined;
  }

  // Sync answers (describe, classify) are one JSON string the bootstrap assembles itself.
  function failure(code: string, message: string): string {
    return '{"ok":false,"code":' + json(code) + ',"message":' + json(message) + '}';
  }

  function describe(namespace: Record<string, unknown>): string {
    let text = '[';
    try {
      const tools = toolsOf(namespace);
      for (let i = 0; i < tools.length; i += 1) {
        const tool = tools[i] as Record<string, unknown> | null;
        const out = createNull(null) as Descriptor;
        if (tool === null || typeof tool !== 'object') out.invalid = 'tools[' + i + '] is not an object';
        else {
          out.name = tool.name;
          out.description = tool.description;
          out.parameters = tool.parameters;
          out.deferLoading = tool.deferLoading;
          out.output = tool.output;
          out.hasExecute = typeof tool.execute === 'function';
          out.hasClassifier = typeof tool.isConcurrencySafe === 'function';
          out.fields = fieldNames(tool);
        }
        const part = json(out);
        if (typeof part !== 'string') return failure('INVALID_TOOL_OUTPUT', 'tools[' + i + '] is not JSON');
        text += (i === 0 ? '' : ',') + part;
        if (text.length > MAX_DESCRIBE_BYTES) return failure('OUTPUT_TOO_LARGE', 'the tool list is too large');
      }
    } catch (error) {
      // A schema nested past the realm's stack (about 50,000 levels): decode-outcome.ts says the same past the host's.
      if (error instanceof RangeErrorIntrinsic && describeThrown(error) === 'Maximum call stack size exceeded') return failure('INVALID_TOOL_OUTPUT', 'the tool list is nested too deeply to read: a schema may nest 256 levels');
      return failure('TOOL_ERROR', describeThrown(error));
    }
    return '{"ok":true,"value":' + text + ']}';
  }

  // The tool's own enumerable names, as one JSON text built here: an array would be filled
  // through setters a plugin may have put on Array.prototype. Which ones nothing reads is the
  // host's to say (describe-plugin.ts).
  function fieldNames(tool: object): string {
    let names: unknown[];
    try {
      names = apply(objectKeys, undefined, [tool]) as unknown[];
    } catch {
      return '[]'; // a Proxy whose traps throw: its named fields were read all the same
    }
    let text = '[';
    let count = 0;
    for (let i = 0; i < names.length && count < MAX_FIELD_NAMES; i += 1) {
      const name = names[i];
      if (typeof name !== 'string') continue;
      text += (count === 0 ? '' : ',') + json(name.length > 64 ? (apply(sliceString, name, [0, 64]) as string) : name);
      count += 1;
    }
    return text + ']';
  }

  function classify(namespace: Record<string, unknown>, callsJson: string): string {
    const calls = parse(callsJson) as { tool: string; argsJson: string }[];
    let text = '[';
    for (let i = 0; i < calls.length; i += 1) {
      let verdict = false;
      try {
        const call = calls[i] as { tool: string; argsJson: string };
        const tool = find(namespace, call.tool);
        const classifier = tool === undefined ? undefined : tool.isConcurrencySafe;
        verdict = typeof classifier === 'function' && apply(classifier, tool, [parse(call.argsJson)]) === true;
      } catch {
        verdict = false;
      }
      text += (i === 0 ? '' : ',') + (verdict ? 'true' : 'false');
    }
    return '{"ok":true,"value":' + text + ']}';
  }

  // The last answer given as a task's own value, kept for the host to collect when isolated-vm
  // rejected that task instead (it does when the plugin left a promise rejected and unhandled).
  let kept: { token: string; text: string } | undefined;

  /** Tells the host, with the call's outcome, how many native units were made since it last heard, and what the realm held back. */
  function tellCounts(token: string): void {
    if (nativeUnitsUntold !== 0) toHost(['native', token, nativeUnitsUntold]);
    nativeUnitsUntold = 0;
    tellHeld(token, 'logs-dropped');
    tellHeld(token, 'requests-refused');
  }

  /** An outcome as the task's own answer: the host then needs no second message. */
  function answer(outcome: [string, string]): string {
    const token = runningToken as string;
    runningToken = undefined;
    tellCounts(token);
    const text = outcome[0] + '\u0000' + outcome[1];
    kept = { token, text };
    return text;
  }

  function collect(token: string): string | undefined {
    const found = kept !== undefined && kept.token === token ? kept.text : undefined;
    kept = undefined;
    return found;
  }

  /**
   * Runs a call. A tool that returns at once (not a thenable) has its outcome returned by
   * this very task; otherwise the outcome goes out through the host function when it settles.
   */
  function call(namespace: Record<string, unknown>, token: string, name: string, argsJson: string, maxBytes: number, contextJson: string): string | undefined {
    runningToken = token;
    icuObjects = 0;
    let tool: Record<string, unknown> | undefined;
    let value: unknown;
    try {
      tool = find(namespace, name);
      const execute = tool === undefined ? undefined : tool.execute;
      if (typeof execute !== 'function') return answer(['TOOL_ERROR', 'the plugin has no tool named ' + json(name)]);
      const context = parse(contextJson) as Record<string, unknown>;
      context.capabilities = capabilitiesFor(token);
      value = apply(execute, tool, [parse(argsJson), freeze(context)]);
      const then = value !== null && (typeof value === 'object' || typeof value === 'function') ? (value as { then?: unknown }).then : undefined;
      if (typeof then !== 'function') return answer(encodeResult(value, maxBytes, strictResults));
    } catch (error) {
      return answer(['TOOL_ERROR', describeThrown(error)]);
    }
    void settleLater(token, value, maxBytes);
    return undefined;
  }

  async function settleLater(token: string, pending: unknown, maxBytes: number): Promise<void> {
    let outcome: [string, string];
    try {
      outcome = encodeResult(await pending, maxBytes, strictResults);
    } catch (error) {
      outcome = ['TOOL_ERROR', describeThrown(error)];
    }
    runningToken = undefined;
    tellCounts(token);
    toHost(['report', token, outcome[0], outcome[1]]);
  }

  /**
   * Hands an answer to the request waiting for it, while its call's tool still runs. The host
   * stops answering at the report, but learns of a report made by the task's own value only
   * when that task settles, and may answer meanwhile: such an answer is dropped here (its
   * promise waits for ever, as after any report), or code the plugin left behind would run
   * after its call answered (a leftover loop once spun its call into CPU_LIMIT that way).
   */
  function deliver(id: number, ok: boolean, payload: string): void {
    const waiter = waiting[id];
    if (waiter === undefined) return;
    delete waiting[id];
    if (waiter.token !== runningToken) return;
    if (ok) waiter.resolve(parse(payload));
    else waiter.reject(capabilityError(waiter.name, payload));
  }

  // The plugin module's namespace, handed over once by the realm's link module (see realm.ts)
  // after the plugin's top level ran; a task started while it is missing finds no plugin.
  let namespace: Record<string, unknown> | undefined;
  let linked = false;
  const link = (pluginNamespace: Record<string, unknown>): void => {
    if (linked) return;
    linked = true;
    namespace = pluginNamespace;
  };
  defineProperty(g, linkGlobal, { value: link, configurable: true, enumerable: false, writable: false });

  function entry(mode: string, a: unknown, b: unknown, c: unknown, d: unknown, e: unknown): string | undefined {
    if (mode === 'collect') return collect(a as string);
    if (mode === 'deliver') {
      deliver(a as number, b as boolean, c as string);
      return undefined;
    }
    // The plugin's top level did not finish: the host reports its load failure, not this.
    if (namespace === undefined) return '\u0000unloaded'; // decode-outcome.ts reads this marker
    if (mode === 'call') {
      kept = undefined;
      return call(namespace, a as string, b as string, c as string, d as number, e as string);
    }
    if (mode === 'classify') return classify(namespace, a as string);
    return describe(namespace);
  }

  // The script's completion value: the host takes it as a Reference, and it is never on the global.
  return entry;
}
