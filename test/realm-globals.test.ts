// The realm's standard helpers, through the real sandbox: known vectors for each, their
// shape on the global, fresh random streams per realm, and a plugin that tampers with
// built-ins first getting correct results or a plain error, never the host.
import type { JsonValue, ToolResult } from '@airlock/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { harness, type Harness } from './support/plugin-harness.js';

type Json = Record<string, JsonValue>;

function valueOf(results: ToolResult[]): Json {
  const [result] = results;
  if (result === undefined || result.isError) throw new Error(`the call failed: ${JSON.stringify(result)}`);
  return result.value as Json;
}

describe('realm globals', () => {
  let plugin: Harness;
  beforeAll(async () => {
    plugin = await harness('plugins/realm-globals.js', { cpuMs: 1000, timeoutMs: 5000, memoryMb: 64 });
  });
  afterAll(async () => {
    await plugin.close();
  });
  const call = async (tool: string, args: JsonValue = {}): Promise<Json> => valueOf((await plugin.call(tool, args)).results);

  it('are lazy accessors until first read, then plain writable data properties, with no trace of the seed', async () => {
    const value = await call('shape');
    const names = ['TextEncoder', 'TextDecoder', 'URL', 'URLSearchParams', 'atob', 'btoa', 'structuredClone', 'crypto', 'DOMException'];
    expect(value.before).toEqual(names.map((name) => [name, 'function', false, true]));
    expect(value.types).toEqual(['function', 'function', 'function', 'function', 'function', 'function', 'function', 'object', 'function']);
    expect(value.after).toEqual(names.map((name) => [name, true, true, false, true]));
    expect(value).toMatchObject({ replaced: 'replaced', leaked: [], noSubtle: true });
  });

  it('TextEncoder and TextDecoder: UTF-8 with fatal, ignoreBOM, stream and encodeInto', async () => {
    expect(await call('text')).toEqual({
      encoded: [104, 195, 169, 108, 108, 111, 32, 226, 130, 172, 32, 240, 157, 132, 158],
      encoding: 'utf-8',
      roundTrip: 'héllo € 𝄞',
      replacement: 'a\uFFFDb',
      fatal: { name: 'TypeError', message: expect.any(String), isError: true },
      bomStripped: 'a',
      bomKept: 2,
      streamed: ['', '€', ''],
      into: [1, 1, [97, 0, 0]],
      label: 'utf-8',
    });
  });

  it('URL and URLSearchParams follow the WHATWG URL Standard', async () => {
    expect(await call('url')).toEqual({
      href: 'https://User:Pa%20ss@example.com/a/c?q=1&q=2&x=a+b&added=%C3%A4+%26%3D#frag',
      parts: ['https:', 'User', 'Pa%20ss', 'example.com', '', '/a/c', '#frag', 'https://example.com'],
      all: ['1', '2'],
      x: 'a b',
      relative: 'http://h.test/a/d?e#f',
      idn: 'xn--bcher-kva.example',
      punycode: 'xn--bcher-kva.example',
      ipv4: '127.0.0.1',
      ipv6: '[::1]:8080',
      params: 'a=1&b=2',
      invalid: { name: 'TypeError', message: expect.stringMatching(/invalid url/i), isError: true },
      canParse: [true, false],
      json: '{"u":"https://a.b/c"}',
    });
  });

  it('atob and btoa: RFC 4648 vectors, forgiving decode, InvalidCharacterError', async () => {
    const invalid = { name: 'InvalidCharacterError', message: expect.any(String), isError: true, code: 5 };
    expect(await call('base64')).toEqual({
      vectors: ['', 'Zg==', 'Zm8=', 'Zm9v', 'Zm9vYg==', 'Zm9vYmE=', 'Zm9vYmFy'],
      back: ['', 'f', 'fo', 'foo', 'foob', 'fooba', 'foobar'],
      binary: 'AP+A',
      forgiving: ['foob', 'foob', 'a'],
      badInput: invalid,
      badChar: invalid,
      badPadding: invalid,
      wide: invalid,
      nonString: 'MTI=',
    });
  });

  it('structuredClone: cycles, shared references, Date, RegExp, Map, Set, ArrayBuffer, typed arrays; DataCloneError for functions and symbols', async () => {
    const dataClone = { name: 'DataCloneError', message: expect.any(String), isError: true, code: 25 };
    expect(await call('clone')).toEqual({
      cycle: true,
      set: [1, 'two'],
      date: true,
      re: [true, 'a+b', 'gi'],
      buffer: [1, 2, 3],
      u16: [1, 65535],
      sharedKept: true,
      big: 'bigint',
      nested: { deep: [1, [2, [3]]] },
      fn: dataClone,
      symbol: dataClone,
      isDomException: 25,
    });
  });

  it('crypto: getRandomValues within its quota and integer types only, v4 UUIDs', async () => {
    const value = await call('random');
    expect(value.sample).toMatch(/^[0-9a-f]{64}$/);
    expect(value).toMatchObject({
      sameArray: true,
      u32: 4,
      quota: { name: 'QuotaExceededError', isError: true, code: 22 },
      float: { name: 'TypeMismatchError', isError: true },
      notView: { name: 'TypeMismatchError', isError: true },
    });
    // 65,536 uniform bytes hold about 256 zeros; a broken generator is far off.
    expect(value.zerosIn64k).toBeGreaterThan(150);
    expect(value.zerosIn64k).toBeLessThan(400);
    const uuids = value.uuids as string[];
    for (const uuid of uuids) expect(uuid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(uuids[0]).not.toBe(uuids[1]);
  });

  it('sort, toSorted and Proxy, which the realm guards, behave as the built-ins for ordinary use; a sort reads length once', async () => {
    expect(await call('guarded')).toEqual({
      arrayLike: [true, '0,1,2,length', 'a', 'b', true],
      sameProxy: true,
      proxied: 'a,b,c',
      lengthReads: 1,
      toSorted: ['1,2,3', 'a,b,c', '3,2,1'],
      primitive: 'object',
      numbers: '1,10,9',
      typed: '1,2,3',
      proxyShape: ['function', 'Proxy', 2, true, 'TypeError', 'TypeError', true],
      frozen: [true, 'a'],
      accessors: 'a,b',
      badCompare: 'TypeError',
    });
  });

  it('every fresh realm has its own random stream', async () => {
    const samples = new Set<string>();
    for (let i = 0; i < 6; i += 1) samples.add((await call('random')).sample as string);
    expect(samples.size).toBe(6);
  });

  // Each family of built-ins replaced on its own, by functions that throw or that lie.
  const families = ['typed-arrays', 'arrays', 'strings', 'statics', 'object-prototype', 'late', 'globals'] as const;
  const correct: Json = { encode: [104, 195, 169], decode: 'hé', url: 'https://a.b/d?e=1', params: '2', btoa: 'Zm9v', atob: 'foo', clone: 2, uuid: 36 };
  type Outcome = { ok?: JsonValue; error?: { isError: boolean; name: string; message: string } };
  for (const family of families) {
    for (const mode of ['throwing', 'lying'] as const) {
      it(`a plugin that replaced built-ins (${family}, ${mode}) gets a result or a plain error, never the host; crypto is right or refuses`, async () => {
        const value = await call('tampered', { family, mode });
        expect(value.host).toEqual({ ok: ['undefined', 'undefined', 'undefined', 'undefined'] });
        for (const name of [...Object.keys(correct), 'random', 'refill']) {
          const outcome = value[name] as Outcome;
          expect(outcome.error === undefined ? true : outcome.error.isError, `${name}: ${JSON.stringify(outcome)}`).toBe(true);
        }
        // Written on intrinsics captured before plugin code: right whatever was replaced, or a plain error.
        for (const name of ['btoa', 'atob', 'uuid']) {
          const outcome = value[name] as Outcome;
          if (outcome.error === undefined) expect(outcome.ok, name).toEqual(correct[name]);
        }
        // crypto checks the built-ins ChaCha20 reads: strong values or a refusal, never a stream the plugin's code computed.
        const random = value.random as { ok?: { same: number; zero: number }; error?: unknown };
        if (random.error === undefined) {
          expect(random.ok!.same).toBeLessThan(6);
          expect(random.ok!.zero).toBeLessThan(6);
        }
        const refill = value.refill as Outcome;
        if (refill.error === undefined) expect(refill.ok).toMatch(/^[0-9a-f]{16}$/);
        expect(refill.ok, 'a refill keyed with zeros').not.toBe('da41597c5157488d');
        // Replacements that throw surface as errors, never as wrong answers; and replacing the global constructors changes nothing.
        if (mode === 'throwing' || family === 'globals') {
          for (const [name, expected] of Object.entries(correct)) {
            const outcome = value[name] as Outcome;
            if (outcome.error === undefined) expect(outcome.ok, name).toEqual(expected);
          }
        }
        if (family === 'globals') for (const name of Object.keys(correct)) expect((value[name] as Outcome).ok, name).toEqual(correct[name]);
      });
    }
  }
});
