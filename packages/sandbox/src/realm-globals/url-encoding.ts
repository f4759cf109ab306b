// Stands in for whatwg-url's lib/encoding.js, which builds a TextEncoder and TextDecoder
// from the global scope when it loads: the bundle points it here instead, at the same
// UTF-8 codec our TextEncoder uses, so a plugin's own `globalThis.TextEncoder` never
// reaches the URL parser.
import { utf8fromStringLoose, utf8toStringLoose } from '@exodus/bytes/utf8.js';

export function utf8Encode(text: string): Uint8Array {
  return utf8fromStringLoose(text);
}

export function utf8DecodeWithoutBOM(bytes: Uint8Array): string {
  return utf8toStringLoose(bytes);
}
