// The host's side of the realm's standard helpers (TextEncoder, URL, atob, structuredClone,
// crypto...): the bundle built by scripts/build-realm-globals.mjs from src/realm-globals,
// compiled once per isolate and run in every new realm before the bootstrap, and the
// random seed each realm gets.
import type ivm from './ivm.js';
import { ScriptCodeCache } from './script-code-cache.js';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';

/** Where the realm's bundle reads (and deletes) its seed; must match src/realm-globals/install.ts. */
const SEED_GLOBAL = '__airlock_seed';
/** Our own code, but in the plugin's isolate: bound it all the same (it only defines accessors). */
const RUN_TIMEOUT_MS = 1000;

/**
 * The bundle's parts (src/realm-globals/install.ts), each loaded the first time plugin code
 * reads one of its globals, with what shows a plugin may read them, and a use of each that
 * runs its common paths: our own code, run only in an isolate of ours that runs nothing else.
 */
const PARTS: readonly { readonly mentioned: RegExp; readonly exercise: string }[] = [
  { mentioned: /\bText(?:En|De)coder\b/, exercise: "new TextDecoder().decode(new TextEncoder().encode('a\u00e9'));" },
  { mentioned: /\bURL(?:SearchParams)?\b/, exercise: "const u = new URL('https://a.example/b/../c?d=1#e'); u.searchParams.append('f', 'g h'); String(u); new URLSearchParams('a=1&b=2').toString();" },
  { mentioned: /\b(?:atob|btoa)\b/, exercise: "atob(btoa('ab'));" },
  { mentioned: /\bstructuredClone\b/, exercise: "structuredClone({ a: [1, 'b'], c: new Map([[1, new Date(0)]]) });" },
  { mentioned: /\bcrypto\b/, exercise: 'crypto.getRandomValues(new Uint8Array(8)); crypto.randomUUID();' },
];
/** Some of PARTS, one bit each by index: at most 2^5 code caches per thread. */
export type PartSet = number;

let source: string | undefined;
/** Per set of parts a plugin mentions: V8's code cache for the bundle with those parts compiled too. */
const codeCaches = new Map<PartSet, ScriptCodeCache>();

/**
 * The parts `pluginSource` mentions a global of. Only a hint for which code cache its isolates
 * compile the bundle from: a plugin that reads a global the hint missed still gets it, it
 * pays for compiling its part then, as every plugin did before.
 */
export function partsMentioned(pluginSource: string): PartSet {
  let parts = 0;
  PARTS.forEach((part, index) => {
    if (part.mentioned.test(pluginSource)) parts |= 1 << index;
  });
  return parts;
}

/** This thread's code cache for the bundle with the parts `parts` compiled too (script-code-cache.ts). */
export function realmGlobalsCodeCache(parts: PartSet): ScriptCodeCache {
  source ??= readFileSync(new URL('./realm-globals.js', import.meta.url), 'utf8');
  let cache = codeCaches.get(parts);
  if (cache === undefined) {
    cache = new ScriptCodeCache(source, 'airlock:realm-globals');
    codeCaches.set(parts, cache);
  }
  return cache;
}

/** Our own code that uses each of `parts` once (code-cache-remake.ts), one text per part. */
export function exerciseOf(parts: PartSet): string[] {
  return PARTS.filter((_, index) => (parts & (1 << index)) !== 0).map((part) => part.exercise);
}

/**
 * Installs the helpers in a new context, before the host's function is put there (this
 * code never sees it). The seed is 32 bytes from the OS CSPRNG, crossing as a plain hex
 * string: every realm, spares included, gets its own random stream.
 */
export function installRealmGlobals(context: ivm.Context, script: ivm.Script): void {
  context.global.setSync(SEED_GLOBAL, randomBytes(32).toString('hex'));
  script.runSync(context, { timeout: RUN_TIMEOUT_MS });
}
