// crypto.getRandomValues and crypto.randomUUID, cryptographically secure, never Math.random.
//
// Design: the host draws 32 bytes from the operating system's CSPRNG (node:crypto) for
// every realm it builds and hands them over as a hex string. This realm expands them with
// ChaCha20 (RFC 8439, @noble/ciphers, audited) as a keystream generator with fast key
// erasure: each refill runs ChaCha20 under the current key, takes the first 32 bytes as
// the next key and serves the rest, so the counter never nears its limit and a later leak
// of the state reveals nothing already served. A fresh key per realm means no realm ever
// repeats another's stream (spares and warm realms included).
import { chacha20 } from '@noble/ciphers/chacha.js';
import { byteLengthOf, bytesOf, charCodeAt, create, DOMException, freeze, setBytes, hexByte, typedArrayKind } from './captured.js';

const KEY_BYTES = 32;
// Small refills: a fresh realm runs ChaCha20 in V8's interpreter (~40 µs a 64-byte block),
// and most calls want a UUID or a token, not kilobytes. 32 key bytes + 96 = two blocks.
const MIN_REFILL_BYTES = 96;
const MAX_REQUEST_BYTES = 65536;
const INTEGER_ARRAYS = create(null) as Record<string, true>;
const INTEGER_ARRAY_NAMES = ['Int8Array', 'Uint8Array', 'Uint8ClampedArray', 'Int16Array', 'Uint16Array', 'Int32Array', 'Uint32Array', 'BigInt64Array', 'BigUint64Array'];
for (let i = 0; i < INTEGER_ARRAY_NAMES.length; i += 1) INTEGER_ARRAYS[INTEGER_ARRAY_NAMES[i]!] = true;

/** RFC 8439 appendix A.1, test vector 1: ChaCha20's keystream for an all-zero key and nonce, block 0 (first 16 bytes). */
const KNOWN_ANSWER = [0x76, 0xb8, 0xe0, 0xad, 0xa0, 0xf1, 0x3d, 0x90, 0x40, 0x5d, 0x6a, 0xe5, 0x53, 0x86, 0xbd, 0x28];

/** Checked once per realm, when `crypto` is first read: a ChaCha20 that computes anything else is never used. */
function assertKnownAnswer(): void {
  const block = chacha20(new Uint8Array(32), new Uint8Array(12), new Uint8Array(64));
  for (let i = 0; i < KNOWN_ANSWER.length; i += 1) {
    if (block[i] !== KNOWN_ANSWER[i]) throw new Error('crypto is unavailable: ChaCha20 failed its known-answer test');
  }
}

export interface RandomSource {
  getRandomValues<T extends ArrayBufferView | null>(array: T): T;
  randomUUID(): string;
}

/** The realm's `crypto`, keyed by the host's seed. `tampered` says whether a built-in ChaCha20's wrapper reads was replaced since the realm was built (pristine.ts). */
export function createCrypto(seedHex: string, tampered: () => boolean): RandomSource {
  if (tampered()) throw new Error("crypto is unavailable: this realm's built-in typed arrays were modified");
  assertKnownAnswer();
  let key = new Uint8Array(KEY_BYTES);
  for (let i = 0; i < KEY_BYTES; i += 1) key[i] = (hexDigit(charCodeAt(seedHex, i * 2)) << 4) | hexDigit(charCodeAt(seedHex, i * 2 + 1));
  const nonce = new Uint8Array(12);
  let pool = new Uint8Array(0);
  let used = 0;

  // A plugin that replaced a built-in the ChaCha20 wrapper reads gets a plain error, never a weakened stream.
  function assertPristine(): void {
    if (tampered()) throw new Error("crypto is unavailable: this realm's built-in typed arrays were modified");
  }

  /** `count` fresh bytes of keystream; the key moves on before any of them is returned. */
  function next(count: number): Uint8Array {
    if (used + count > pool.length) {
      assertPristine();
      const size = KEY_BYTES + (count > MIN_REFILL_BYTES ? count : MIN_REFILL_BYTES);
      const stream = chacha20(key, nonce, new Uint8Array(size));
      const nextKey = new Uint8Array(KEY_BYTES);
      for (let i = 0; i < KEY_BYTES; i += 1) {
        nextKey[i] = stream[i]!;
        stream[i] = 0;
        key[i] = 0;
      }
      key = nextKey;
      for (let i = used; i < pool.length; i += 1) pool[i] = 0; // what the old pool never served
      pool = stream;
      used = KEY_BYTES;
    }
    const out = new Uint8Array(count);
    for (let i = 0; i < count; i += 1) {
      out[i] = pool[used + i]!;
      pool[used + i] = 0;
    }
    used += count;
    return out;
  }

  function getRandomValues<T extends ArrayBufferView | null>(array: T): T {
    if (arguments.length === 0) throw new TypeError("Failed to execute 'getRandomValues' on 'Crypto': 1 argument required, but only 0 present.");
    const kind = typedArrayKind(array);
    if (kind === undefined || INTEGER_ARRAYS[kind] !== true) throw new DOMException("Failed to execute 'getRandomValues' on 'Crypto': The provided ArrayBufferView is not an integer array type.", 'TypeMismatchError');
    const length = byteLengthOf(array);
    if (length > MAX_REQUEST_BYTES) throw new DOMException(`Failed to execute 'getRandomValues' on 'Crypto': The ArrayBufferView's byte length (${length}) exceeds the number of bytes of entropy available via this API (${MAX_REQUEST_BYTES}).`, 'QuotaExceededError');
    setBytes(bytesOf(array), next(length), 0);
    return array;
  }

  function randomUUID(): string {
    const bytes = next(16);
    bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8]! & 0x3f) | 0x80; // RFC 9562 variant
    let text = '';
    for (let i = 0; i < 16; i += 1) {
      if (i === 4 || i === 6 || i === 8 || i === 10) text += '-';
      text += hexByte(bytes[i]!);
    }
    return text;
  }

  const crypto = create(null) as RandomSource;
  crypto.getRandomValues = getRandomValues;
  crypto.randomUUID = randomUUID;
  return freeze(crypto);
}

/** A seed the realm can use: 64 hex digits, or an error (the host always sends one). */
export function checkSeed(seedHex: unknown): string {
  if (typeof seedHex !== 'string' || seedHex.length !== KEY_BYTES * 2) throw new Error('crypto is unavailable: no seed');
  for (let i = 0; i < seedHex.length; i += 1) {
    if (hexDigit(charCodeAt(seedHex, i)) < 0) throw new Error('crypto is unavailable: bad seed');
  }
  return seedHex;
}

function hexDigit(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x61 + 10;
  return -1;
}
