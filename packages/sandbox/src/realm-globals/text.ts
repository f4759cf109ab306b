// TextEncoder and TextDecoder: @exodus/bytes's spec-following pure-JS implementation
// (UTF-8, UTF-16 and the single-byte encodings; `fatal`, `ignoreBOM`, `stream`).
export { TextDecoder, TextEncoder } from '@exodus/bytes/encoding-lite.js';
