// The worker thread that strips a program's types (see type-stripper.ts): sucrase's parser
// is quadratic on some inputs (`a<b<b<...>(x)` chains), so it never runs on the host's main
// thread, and a strip past its deadline is ended by terminating this thread.
import { stripTypes } from './strip-types.js';

export type StripAnswer = { readonly ok: true; readonly code: string } | { readonly ok: false; readonly message: string };

export default function strip(code: string): StripAnswer {
  try {
    return { ok: true, code: stripTypes(code) };
  } catch (error) {
    // A syntax error, or a stack overflow on deep nesting: either way the program does not parse.
    return { ok: false, message: error instanceof Error ? error.message.slice(0, 300) : 'unknown error' };
  }
}
