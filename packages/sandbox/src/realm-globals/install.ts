// The bundle's entry, run in every new realm before the bootstrap and before any plugin
// code. It guards the built-ins that would ask V8 for arrays it cannot make (result-size-guards.ts)
// and those that copy locale tags and option strings into ICU (icu-argument-guards.ts),
// then only captures intrinsics and defines accessors: each helper is built the first
// time plugin code reads its global (the accessor then replaces itself with a plain data
// property, writable and configurable like any Web API global), so a plugin that uses
// none of them pays for none of them. The parts themselves (text, url, base64, clone,
// random) are separate bundles wrapped in functions by scripts/build-realm-globals.mjs:
// V8 compiles each once per isolate, on first use, and a new realm only creates the
// wrapper functions.
import type * as Base64 from './base64.js';
import type * as Clone from './clone.js';
import type * as Random from './random.js';
import type * as Text from './text.js';
import type * as Url from './url.js';
import { captureIntrinsics, intrinsicsFrom, type Intrinsics } from './intrinsics.js';
import { changedSince, snapshot } from './pristine.js';
import { guardIcuArguments, ICU_ARGUMENTS_GLOBAL, icuArgumentCheck } from './icu-argument-guards.js';
import { guardResultSizes } from './result-size-guards.js';

interface Parts {
  base64: typeof Base64;
  clone: typeof Clone;
  random: typeof Random;
  text: typeof Text;
  url: typeof Url;
}

/** Defined by the build script around this bundle: each part's loader, in the order of PART_INDEX (an array: cheaper to create per realm than an object). */
declare const __airlockParts: readonly ((shared: Intrinsics) => unknown)[];
const PART_INDEX = { text: 0, url: 1, base64: 2, clone: 3, random: 4 } as const;

/** The host puts the realm's random seed (64 hex digits) here before this runs; must match src/isolate/install-realm-globals.ts. */
const SEED_GLOBAL = '__airlock_seed';

const realm = globalThis as unknown as Record<string, unknown>;
const seed = realm[SEED_GLOBAL];
delete realm[SEED_GLOBAL];
// First, so everything captured below (and by the bootstrap) is the guarded built-in.
const icuArguments = icuArgumentCheck();
guardResultSizes(icuArguments);
guardIcuArguments(icuArguments);
// For the bootstrap, which wraps the Intl constructors anyway: it takes this and deletes it.
const handOff = Object.create(null) as PropertyDescriptor;
handOff.value = icuArguments;
handOff.configurable = true;
Object.defineProperty(realm, ICU_ARGUMENTS_GLOBAL, handOff);
const captured = captureIntrinsics();
const pristine = snapshot();
const defineProperty = Object.defineProperty;
const loaded = Object.create(null) as Partial<Parts>;
let shared: Intrinsics | undefined;

function intrinsics(): Intrinsics {
  return (shared ??= intrinsicsFrom(captured));
}

function part<K extends keyof Parts>(name: K): Parts[K] {
  return (loaded[name] ??= __airlockParts[PART_INDEX[name]]!(intrinsics()) as Parts[K]) as Parts[K];
}

// Descriptors without a prototype: by the time a global settles, plugin code may have put
// `get` or `set` on Object.prototype, and defineProperty reads those through the chain.
const createNull = Object.create as (prototype: null) => PropertyDescriptor;

function settle(name: string, value: unknown): void {
  const descriptor = createNull(null);
  descriptor.value = value;
  descriptor.writable = true;
  descriptor.configurable = true;
  descriptor.enumerable = false;
  defineProperty(realm, name, descriptor);
}

function lazy(name: string, build: () => unknown): void {
  const descriptor = createNull(null);
  descriptor.configurable = true;
  descriptor.enumerable = false;
  descriptor.get = () => {
    const value = build();
    settle(name, value);
    return value;
  };
  descriptor.set = (value: unknown) => {
    settle(name, value);
  };
  defineProperty(realm, name, descriptor);
}

lazy('TextEncoder', () => part('text').TextEncoder);
lazy('TextDecoder', () => part('text').TextDecoder);
lazy('URL', () => part('url').URL);
lazy('URLSearchParams', () => part('url').URLSearchParams);
lazy('atob', () => part('base64').atob);
lazy('btoa', () => part('base64').btoa);
lazy('structuredClone', () => part('clone').structuredClone);
lazy('DOMException', () => intrinsics().DOMException);
lazy('crypto', () => {
  const random = part('random');
  const record = intrinsics();
  return random.createCrypto(random.checkSeed(seed), () => changedSince(pristine, record));
});
