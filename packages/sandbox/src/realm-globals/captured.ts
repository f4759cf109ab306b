// What the lazily loaded parts of the bundle (text, url, base64, clone, random) use instead
// of the realm's globals: the record intrinsics.ts captured before plugin code ran, passed
// in as `__airlockShared` when a part first loads. The build script declares each
// constructor name (constructor-names.json) as a variable around the part, so a free
// `Uint8Array` or `Object` in library code (or in esbuild's own helpers) is the captured
// one; esbuild injects this module, so `globalThis`/`self` in library code resolve to
// `airlockLibraryGlobal` and `SharedArrayBuffer` to the stand-in below.
import type { Intrinsics } from './intrinsics.js';

declare const __airlockShared: Intrinsics;

const shared = __airlockShared;

export const airlockLibraryGlobal = shared.libraryGlobal;
export const DOMException = shared.DOMException;
export const { apply, defineProperty, getOwnPropertyDescriptor, getPrototypeOf, freeze, create, hasOwn, typedArrayKind, bytesOf, byteLengthOf, setBytes, charCodeAt, charFromCode, hexByte } = shared;

/**
 * Library code's SharedArrayBuffer (webidl-conversions reads its accessors when whatwg-url
 * loads): the realm has none unless granted, and these helpers never take one, so every
 * brand check against it answers "not a SharedArrayBuffer".
 */
class NoSharedArrayBuffer {
  get byteLength(): number {
    throw new TypeError('not a SharedArrayBuffer');
  }

  get growable(): boolean {
    throw new TypeError('not a SharedArrayBuffer');
  }
}
export { NoSharedArrayBuffer as SharedArrayBuffer };
