// TypeScript in, JavaScript out, for a Code Mode program: types are erased by sucrase (a
// small, fast, pure-JavaScript transformer: no native binary, the same on every Node line),
// nothing else changes. It runs on the host, so the program's size is bounded before it gets
// here (CodeModeLimits.maxCodeChars); sucrase's parser is linear in its input.
import { transform } from 'sucrase';

/** The program without its types; throws a SyntaxError-like Error with a position when it does not parse. */
export function stripTypes(code: string): string {
  return transform(code, { transforms: ['typescript'], disableESTransforms: true, keepUnusedImports: true }).code;
}
