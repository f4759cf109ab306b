// V8's code cache for one of our own scripts that every new isolate compiles (the realm's
// standard helpers, a plugin's bootstrap). Made at the first compile, a cache holds only what
// V8 compiled then: little more than the top level. Every function the script calls when it
// runs in a realm is compiled again, lazily, in each new isolate.
//
// So the cache is made once more after the script has run: compiling the same text again in
// the same isolate finds V8's own compiled script (its compilation cache) with those functions
// compiled, and the code cache made from it carries them. The next isolates run the script
// without compiling them: in the bench a new tenant's first call with a tool that reads URL
// and TextEncoder (install-realm-globals.ts) went from 20.6 to 13.3-14.4 ms.
//
// Only ever in an isolate of our own that runs nothing but our scripts (code-cache-remake.ts):
// never a tenant's, whose memory and CPU the work would be charged to.
import type ivm from './ivm.js';

export class ScriptCodeCache {
  readonly #source: string;
  readonly #filename: string;
  #data: ivm.ExternalCopy<ArrayBuffer> | undefined;
  #remade = false;

  constructor(source: string, filename: string) {
    this.#source = source;
    this.#filename = filename;
  }

  /** The script in `isolate`, from the cache when there is one (made by this first compile otherwise). */
  compile(isolate: ivm.Isolate): ivm.Script {
    const cachedData = this.#data;
    const script = isolate.compileScriptSync(this.#source, { filename: this.#filename, ...(cachedData === undefined ? { produceCachedData: true } : { cachedData }) });
    this.#data ??= producedCache(script);
    return script;
  }

  /** Whether remakeAfterRun has been tried (once is enough: a failure keeps the first cache). */
  get remade(): boolean {
    return this.#remade;
  }

  /**
   * Once: the cache made again in `isolate`, after the script ran there. If V8 compiles it anew
   * instead, the cache is no worse than before.
   */
  remakeAfterRun(isolate: ivm.Isolate): void {
    if (this.#remade) return;
    this.#remade = true;
    try {
      const rich = producedCache(isolate.compileScriptSync(this.#source, { filename: this.#filename, produceCachedData: true }));
      if (rich !== undefined) this.#data = rich;
    } catch {
      // the isolate went away meanwhile: keep the cache there is
    }
  }
}

/** isolated-vm sets it on a script compiled with produceCachedData; its typings omit the field. */
function producedCache(script: ivm.Script): ivm.ExternalCopy<ArrayBuffer> | undefined {
  return (script as unknown as { cachedData?: ivm.ExternalCopy<ArrayBuffer> }).cachedData;
}
