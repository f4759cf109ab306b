// The worker thread that strips a program's types (see type-stripper.ts): sucrase's parser
// is quadratic on some inputs (`a<b<b<...>(x)` chains), so it never runs on the host's main
// thread, and a strip past its deadline is ended by terminating this thread.
import type { MessagePort } from 'node:worker_threads';
import { stripTypes } from './strip-types.js';

/** A strip: the program, and the port that tells the host it started (its deadline runs from then). */
export interface StripTask {
  readonly code: string;
  readonly started: MessagePort;
}

export type StripAnswer = { readonly ok: true; readonly code: string } | { readonly ok: false; readonly message: string };

export default function strip({ code, started }: StripTask): StripAnswer {
  // Before the parse: the host starts the deadline now, not while this thread started and
  // loaded sucrase (seconds on a loaded machine, and no fault of the program's).
  started.postMessage(null);
  started.close();
  try {
    return { ok: true, code: stripTypes(code) };
  } catch (error) {
    // A syntax error, or a stack overflow on deep nesting: either way the program does not parse.
    return { ok: false, message: error instanceof Error ? error.message.slice(0, 300) : 'unknown error' };
  }
}
