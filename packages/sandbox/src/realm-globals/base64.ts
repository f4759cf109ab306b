// atob and btoa, per the HTML standard's forgiving-base64. Hand-written: the npm
// package for exactly this (`abab`) is deprecated, and the codec is a few lines; written
// with captured intrinsics only, so a plugin's prototype changes cannot alter it.
import { charCodeAt, charFromCode, DOMException } from './captured.js';

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
// Each ASCII code's 6-bit value plus one; 0 for a character outside the alphabet.
const VALUES = new Uint8Array(128);
for (let i = 0; i < 64; i += 1) VALUES[charCodeAt(ALPHABET, i)] = i + 1;

function invalid(what: string): Error {
  return new DOMException(what, 'InvalidCharacterError');
}

export function btoa(data: unknown): string {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'btoa': 1 argument required, but only 0 present.");
  const text = String(data);
  let out = '';
  let i = 0;
  for (; i + 2 < text.length; i += 3) {
    const n = (byteAt(text, i) << 16) | (byteAt(text, i + 1) << 8) | byteAt(text, i + 2);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + ALPHABET[n & 63]!;
  }
  const rest = text.length - i;
  if (rest === 1) {
    const n = byteAt(text, i) << 16;
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + '==';
  } else if (rest === 2) {
    const n = (byteAt(text, i) << 16) | (byteAt(text, i + 1) << 8);
    out += ALPHABET[n >> 18]! + ALPHABET[(n >> 12) & 63]! + ALPHABET[(n >> 6) & 63]! + '=';
  }
  return out;
}

function byteAt(text: string, index: number): number {
  const code = charCodeAt(text, index);
  if (code > 0xff) throw invalid('The string to be encoded contains characters outside of the Latin1 range.');
  return code;
}

const isAsciiWhitespace = (code: number): boolean => code === 0x09 || code === 0x0a || code === 0x0c || code === 0x0d || code === 0x20;

export function atob(data: unknown): string {
  if (arguments.length === 0) throw new TypeError("Failed to execute 'atob': 1 argument required, but only 0 present.");
  const text = String(data);
  // Forgiving-base64 decode: drop ASCII whitespace, then at most two trailing '=' when the length is a multiple of 4.
  // A typed array, not an Array: an index setter a plugin put on Array.prototype cannot reach it.
  const codes = new Uint16Array(text.length);
  let length = 0;
  for (let i = 0; i < text.length; i += 1) {
    const code = charCodeAt(text, i);
    if (!isAsciiWhitespace(code)) {
      codes[length] = code;
      length += 1;
    }
  }
  if (length % 4 === 0 && length > 0 && codes[length - 1] === 0x3d) {
    length -= 1;
    if (codes[length - 1] === 0x3d) length -= 1;
  }
  if (length % 4 === 1) throw invalid('The string to be decoded is not correctly encoded.');
  let out = '';
  let buffer = 0;
  let bits = 0;
  for (let i = 0; i < length; i += 1) {
    const code = codes[i]!;
    const value = (code < 128 ? VALUES[code]! : 0) - 1;
    if (value < 0) throw invalid('The string to be decoded is not correctly encoded.');
    buffer = (buffer << 6) | value;
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out += charFromCode((buffer >> bits) & 0xff);
    }
  }
  return out;
}
