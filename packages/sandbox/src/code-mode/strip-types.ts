// TypeScript in, JavaScript out, for a Code Mode program: types are erased by sucrase (a
// small, fast, pure-JavaScript transformer: no native binary, the same on every Node line),
// nothing else changes. It runs on a worker thread under a deadline (type-stripper.ts):
// sucrase's parser is quadratic on some inputs, so it never runs on the main thread.
import { transform } from 'sucrase';

/** The program without its types; throws a SyntaxError-like Error with a position when it does not parse. */
export function stripTypes(code: string): string {
  return transform(code, { transforms: ['typescript'], disableESTransforms: true, keepUnusedImports: true }).code;
}
