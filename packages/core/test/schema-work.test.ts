// A plugin's schemas run on the host's event loop: no schema, with any value, may hold it.
// Each attack below took seconds on plain ajv (the issue measured 21 s and 22 s); the
// bounds asserted are a second or more, tens of times what the bounded code needs here,
// so load on the machine cannot turn them red, while switching a protection off does.
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileValidator, defineTool, type JsonSchema, type JsonValue, type ToolFailure, type ToolResult } from '../src/index.js';
import { EVERY_ERROR_MAX_CHARS } from '../src/validation/compile-validator.js';
import { useLinearFormats } from '../src/validation/linear-formats.js';
import { cachedProgram } from '../src/validation/linear-regexp.js';
import { call, engine, tool } from './helpers.js';

/** Runs one call of a tool whose output schema is `output` and whose result is `value`; returns the result and how long the host was busy. */
async function outputCheck(output: JsonSchema, value: JsonValue): Promise<{ result: ToolResult; ms: number }> {
  const subject = engine([tool('t', { output, execute: () => value })]);
  const started = performance.now();
  const [result] = await subject.run([call('t')]);
  return { result: result!, ms: performance.now() - started };
}

const error = (result: ToolResult) => (result as ToolFailure).error;

describe('regular expressions from schemas run in linear time', () => {
  it('an output pattern ^(a+)+$ against a crafted result answers at once, with the usual message', async () => {
    // 28 characters: about 5 s for a backtracking engine, doubling with each one more.
    const { result, ms } = await outputCheck({ type: 'object', properties: { s: { type: 'string', pattern: '^(a+)+$' } } }, { s: `${'a'.repeat(28)}!` });
    expect(error(result)).toMatchObject({ code: 'INVALID_TOOL_OUTPUT', message: expect.stringContaining('/s: must match pattern "^(a+)+$"') });
    expect(ms).toBeLessThan(1000);
  });

  it('argument patterns and patternProperties run on the same engine', async () => {
    const parameters = { type: 'object', properties: { s: { type: 'string', pattern: '^(a|a)*$' } }, patternProperties: { '^(b+)+$': { type: 'number' } } };
    const subject = engine([tool('t', { parameters })]);
    const started = performance.now();
    const [bad] = await subject.run([call('t', { s: `${'a'.repeat(28)}!`, [`${'b'.repeat(28)}`]: 'x' })]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error(bad!).message).toContain('/s: must match pattern');
    expect(error(bad!).message).toContain(`/${'b'.repeat(28)}: must be number`);
    const [good] = await subject.run([call('t', { s: 'aaa', bbb: 1 })]);
    expect(good!.isError).toBe(false);
  });

  it('keeps ECMAScript meaning where RE2 differs: \\s, \\S and the dot', () => {
    const validate = compileValidator({ type: 'array', prefixItems: [{ pattern: '^\\s$' }, { pattern: '^\\S$' }, { pattern: '^.$' }, { pattern: '^[\\s]$' }] }, 't', 'output');
    expect(validate(['\u00a0', 'x', 'x', '\u2028'])).toBe(true);
    expect(validate(['x', '\u00a0', '\r', 'x'])).toBe(false);
    expect(validate.errors?.map((e) => e.instancePath)).toEqual(['/0', '/1', '/2', '/3']);
  });

  it('keeps ECMAScript meaning inside a class too: [\\S ] is "no line break", [^\\S] is whitespace, [\\b] a backspace', () => {
    for (const [pattern, inputs] of [
      ['^[\\S ]{1,80}$', ['Hello world', 'Hello\u2028world', 'a\u00a0b', 'a\ufeffb', 'a\u3000b', 'x\ty']],
      ['^[^\\S]$', [' ', '\u2028', 'a', '\u00a0']],
      ['^[\\b]$', ['\b', 'b']],
    ] as const) {
      const validate = compileValidator({ type: 'string', pattern }, 't', 'output');
      for (const input of inputs) expect(validate(input, input.length), `${pattern} on ${JSON.stringify(input)}`).toBe(new RegExp(pattern, 'u').test(input));
    }
  });

  it.each([
    ['lookahead', { properties: { a: { type: 'string', pattern: '^(?=x)x$' } } }, '/properties/a/pattern'],
    ['a backreference', { patternProperties: { '^(a)\\1$': {} } }, '/patternProperties/^(a)\\1$'],
  ])('a pattern with %s is refused at load, naming the tool and the schema path', (_kind, parameters, path) => {
    expect(() => engine([tool('lookbehind_tool', { parameters: { type: 'object', ...parameters } })])).toThrow(
      new RegExp(`tool "lookbehind_tool" parameters is not a usable JSON Schema: at ${path.replace(/[\\^$()]/g, '\\$&')}: pattern .* cannot run in linear time`),
    );
  });

  it.each([
    ['(?i)^abc$', 'Invalid group'],
    ['^\\pL+$', 'Invalid property name'],
  ])('RE2-only syntax %s is refused at load: JSON Schema patterns are ECMAScript, and clients compile them so', (pattern, reason) => {
    expect(() => engine([tool('re2_tool', { parameters: { type: 'object', properties: { a: { type: 'string', pattern } } } })])).toThrow(
      `tool "re2_tool" parameters is not a usable JSON Schema: at /properties/a/pattern: pattern ${JSON.stringify(pattern)} is not an ECMAScript regular expression with the u flag (${reason}), as JSON Schema requires`,
    );
  });
});

describe('formats run in linear time and mean what ajv-formats meant', () => {
  // url backtracks quadratically in ajv-formats: 60,000 characters take seconds there.
  it('a crafted url answers at once', async () => {
    const { result, ms } = await outputCheck({ type: 'string', format: 'url' }, `http://${'::'.repeat(30_000)}`);
    expect(error(result).message).toContain('must match format "url"');
    expect(ms).toBeLessThan(1000);
  });

  const samples = [
    '', 'P', 'PT', 'P1D', 'P1DT', 'P1DT2H', 'P2W', 'PT1.5S', 'a@b.co', 'a.b@c-d.example.org', 'a@-b.com', 'a@@b', 'example.com', 'example.com.', '-bad.com', `${'a'.repeat(64)}.com`,
    `${'a.'.repeat(126)}a`, `${'a.'.repeat(127)}`, '127.0.0.1', '256.0.0.1', '::1', '2001:db8::8a2e:370:7334', '1::2::3', '123e4567-e89b-12d3-a456-426614174000', 'urn:uuid:123e4567-e89b-12d3-a456-426614174000',
    '/a/b~0c', '/a~2', '0/a', '1#', '#/a%20b', 'https://example.com/a?b=c#d', 'http://10.1.2.3/x', 'http://172.20.0.1', 'http://8.8.8.8:53/', 'http://user:pw@example.com', 'ftp://exämple.com/', 'http://a',
    'http://example.com/{id}', '/x/{+path}{?q,lang}', '{bad', 'mailto:a@b.c', '//host/path', 'a b', 'http://[::1]/', 'AZaz09+/', 'AQID', '2020-01-01', 'noon',
  ];
  const formats = Object.entries(fullFormats).flatMap(([name, definition]): [string, (value: string) => boolean][] =>
    definition instanceof RegExp ? [[name, (value) => definition.test(value)]] : name === 'uri' ? [[name, definition as (value: string) => boolean]] : [],
  );
  const uris = ['http://a/b?c#d', 'urn:isbn:0451450523', 'a:', 'a:b"c', 'http://"x"/', '//no-scheme', 'rel/path', 'HTTP://EXAMPLE.COM', 'http://[v1.x]/', 'http://[::ffff:1.2.3.4]:80/', 'x://%zz'];

  it.each(formats)('%s agrees with ajv-formats on every sample', (name, original) => {
    const linear: Record<string, { validate: (value: string) => boolean }> = {};
    useLinearFormats({ addFormat: (formatName: string, definition: unknown) => (linear[formatName] = definition as { validate: (value: string) => boolean }) } as never);
    for (const sample of [...samples, ...uris]) expect([sample, linear[name]!.validate(sample)]).toEqual([sample, original(sample)]);
  });
});

describe('uniqueItems is linear', () => {
  const rows = (count: number) => Array.from({ length: count }, (_, index) => ({ id: index, tags: [{ deep: index % 7 }] }));

  it('10,000 distinct objects validate at once (ajv compared every pair: seconds)', async () => {
    const { result, ms } = await outputCheck({ type: 'array', uniqueItems: true }, rows(10_000));
    expect(result.isError).toBe(false);
    expect(ms).toBeLessThan(1500);
  });

  it('a duplicate (key order does not matter) is named by its two positions', () => {
    const validate = compileValidator({ type: 'array', uniqueItems: true }, 't', 'output');
    expect(validate([{ a: 1, b: [1, { c: 2 }] }, 'x', { b: [1, { c: 2 }], a: 1 }])).toBe(false);
    expect(validate.errors?.[0]?.message).toBe('must NOT have duplicate items (items ## 0 and 2 are identical)');
    expect(validate([1, '1', [1], { '1': 1 }, 1.5, null, false])).toBe(true);
    expect(validate([0, -0])).toBe(false);
  });
});

describe('every validation runs under a step budget sized by the value', () => {
  // d0 → allOf [d1, d1] → … : 2^26 applications for the value {} on plain ajv (seconds).
  const chain = (levels: number): JsonSchema => {
    const defs: Record<string, JsonValue> = { [`d${levels}`]: { type: 'object' } };
    for (let level = 0; level < levels; level += 1) defs[`d${level}`] = { allOf: [{ $ref: `#/$defs/d${level + 1}` }, { $ref: `#/$defs/d${level + 1}` }] };
    return { type: 'object', $defs: defs, $ref: '#/$defs/d0' };
  };

  it('an exponential $ref fan-out stops within the budget, as a result the model can read', async () => {
    const subject = engine([tool('fan_out', { parameters: chain(26) })]);
    const started = performance.now();
    const [result] = await subject.run([call('fan_out', {})]);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(error(result!)).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringMatching(/^fan_out: invalid arguments: validation stopped: .*more than \d+ steps/) });
  });

  it('a required list of 10,000 names over 10,000 items (100 million errors on plain ajv) stops within the budget', async () => {
    const output = { type: 'array', items: { required: Array.from({ length: 10_000 }, (_, index) => `k${index}`) } };
    const { result, ms } = await outputCheck(output, Array.from({ length: 10_000 }, () => ({})));
    expect(error(result).message).toMatch(/validation stopped/);
    expect(ms).toBeLessThan(1000);
  });

  it('one costly application is refused before it runs: a 208,000-character key against 100 patterns, twice', async () => {
    // Each pattern defeats RE2's DFA: about 9 ms per test of this key; patternProperties and additionalProperties test it 200 times.
    const patternProperties = Object.fromEntries(Array.from({ length: 100 }, (_, index) => [`[a-q][^u-z]{13}x{${index + 2}}`, { type: 'string' }]));
    const { result, ms } = await outputCheck({ type: 'object', patternProperties, additionalProperties: { type: 'string' } }, { [`${'abcdefghijklmnopqrstuvwxyz'.repeat(8000)}!`]: 1 });
    expect(error(result).message).toMatch(/validation stopped/);
    expect(ms).toBeLessThan(1000);
  });

  it('a pattern is charged by the program it compiles to, not its length: a[ab]{1000}[cd] over 20,000 a\'s and b\'s', async () => {
    // 15 characters, 1,004 instructions: RE2's DFA gives up and its simulation takes about 10 µs a character (1 MB: 10 s).
    let text = '';
    for (let index = 0; index < 20_000; index += 1) text += (index * 7919) % 13 < 6 ? 'a' : 'b';
    const { result, ms } = await outputCheck({ type: 'object', properties: { s: { type: 'string', pattern: 'a[ab]{1000}[cd]' } } }, { s: text });
    expect(error(result).message).toMatch(/validation stopped/);
    expect(ms).toBeLessThan(1000);
  });

  it('a character class is charged by the ranges it lists: one instruction of 1,500 ranges costs what a dozen do', async () => {
    // [\p{L}\p{N}\p{M}\p{P}\p{S}]{100}z is 103 instructions, charged as one each it fit 1 MB; matching took 1.1 s.
    let text = '';
    for (let index = 0; index < 20_000; index += 1) text += 'abcdefghijklmnopqrstuvwxy'[(index * 7) % 25];
    const pattern = '[\\p{L}\\p{N}\\p{M}\\p{P}\\p{S}]{100}z';
    const { result } = await outputCheck({ type: 'object', properties: { s: { type: 'string', pattern } } }, { s: `${text.slice(0, 1_500)}z` });
    expect(error(result).message).toMatch(/validation stopped/);
    // An honest class over a long value still fits.
    const { result: fits } = await outputCheck({ type: 'object', properties: { s: { type: 'string', pattern: '^[\\p{L}\\p{N} ]+$' } } }, { s: text });
    expect(fits.isError).toBe(false);
  });

  it('a plugin\'s pattern keeps no DFA cache: each kept up to 8 MB of states, and 800 patterns grew the host\'s heap 235 MB a call', async () => {
    const pattern = 'b[ab]{14}[cd]';
    let text = '';
    for (let index = 0; index < 5000; index += 1) text += (index * 7919) % 13 < 6 ? 'a' : 'b';
    const { result } = await outputCheck({ type: 'object', properties: { s: { type: 'string', pattern } } }, { s: text });
    expect(error(result).message).toContain('must match pattern');
    const program = cachedProgram(pattern) as unknown as { re2Input: { lazyDFA: unknown } } | undefined;
    expect(program).toBeDefined();
    expect(program!.re2Input.lazyDFA).toBeNull();
  });

  it('a $ref cycle that never descends into the value is a result, not an exception', async () => {
    const [result] = await engine([tool('cycle', { parameters: { type: 'object', $ref: '#' } })]).run([call('cycle', {})]);
    expect(error(result!)).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('recurses') });
  });

  it('honest work fits: 10,000 rows with nested arrays, formats, patterns and enums validate', async () => {
    const output = {
      type: 'array',
      uniqueItems: true,
      items: {
        type: 'object',
        required: ['id', 'email', 'tags'],
        additionalProperties: false,
        properties: { id: { type: 'integer', minimum: 0 }, email: { type: 'string', format: 'email' }, code: { type: 'string', pattern: '^[A-Z]{3}-\\d+$' }, tags: { type: 'array', items: { enum: ['a', 'b', 'c'] } } },
      },
    };
    const value = Array.from({ length: 10_000 }, (_, index) => ({ id: index, email: `user${index}@example.com`, code: `ABC-${index}`, tags: ['a', 'c'] }));
    const { result } = await outputCheck(output, value);
    expect(result.isError).toBe(false);
  });
});

describe('a turn of costly calls', () => {
  it('lets the event loop in between its calls: one turn holds the shared thread for a call\'s time, not the sum of its calls\'', async () => {
    // Each call: about a megabyte against a pattern, tens of milliseconds of validation.
    const heavy = { type: 'object', properties: { s: { type: 'string', pattern: '^[a-z]+$', maxLength: 2_000_000 } } };
    const text = 'abcdefghijklmnopqrstuvwxy'.repeat(40_000);
    let parsedAll = false;
    let ranBetween: boolean | undefined;
    const turn = engine([tool('heavy', { parameters: heavy })], { observers: { onStage: (event) => void (event.stage === 'parse' && (parsedAll = true)) } })
      .run(Array.from({ length: 4 }, (_, index) => call('heavy', { s: text }, `h${index}`)));
    setImmediate(() => (ranBetween = !parsedAll));
    const results = await turn;
    expect(results.every((result) => !result.isError)).toBe(true);
    expect(ranBetween).toBe(true);
  });

  it('cancelled while it parses, the calls not yet read are not validated: each answers ABORTED_BEFORE_DISPATCH', async () => {
    let validated = 0;
    const parameters = z.object({ s: z.string().regex(/^[a-z]+$/).max(2_000_000).refine(() => (validated += 1) > 0) });
    const cancel = new AbortController();
    const text = 'abcdefghijklmnopqrstuvwxy'.repeat(40_000);
    const turn = engine([defineTool({ name: 'heavy', description: 'Heavy.', parameters, execute: () => null })]).run(Array.from({ length: 4 }, (_, index) => call('heavy', { s: text }, `h${index}`)), { signal: cancel.signal });
    setImmediate(() => cancel.abort());
    const results = await turn;
    expect(results.map((result) => (result.isError ? result.error.code : 'ok'))).toEqual(new Array(4).fill('ABORTED_BEFORE_DISPATCH'));
    expect(validated).toBeLessThan(4);
  });
});

describe('a value that fails is described by what it costs to find', () => {
  const integers = compileValidator({ type: 'array', items: { type: 'integer' } }, 't', 'parameters');

  it('a small one lists every error, for the model to fix them all', () => {
    expect(integers(['a', 'b', 'c'])).toBe(false);
    expect(integers.errors?.map((failure) => failure.instancePath)).toEqual(['/0', '/1', '/2']);
  });

  it('a large one stops at its first error: listing all of a megabyte of wrong items held the event loop for half a second', () => {
    const wrong = Array.from({ length: 40_000 }, () => 'x');
    expect(JSON.stringify(wrong).length).toBeGreaterThan(EVERY_ERROR_MAX_CHARS);
    expect(integers(wrong)).toBe(false);
    expect(integers.errors?.map((failure) => failure.instancePath)).toEqual(['/0']);
    // And a valid one of that size still passes.
    expect(integers(wrong.map(() => 1))).toBe(true);
  });
});

describe('schemas that would escape the bounds are refused at load', () => {
  it('a $ref into enum data (which ajv would compile unmetered) names the tool and the path', () => {
    const parameters = { type: 'object', properties: { a: { $ref: '#/properties/b/enum/0' }, b: { enum: [{ type: 'string' }] } } };
    expect(() => engine([tool('sneaky', { parameters })])).toThrow('tool "sneaky" parameters is not a usable JSON Schema: at /properties/a/$ref: "#/properties/b/enum/0" points at a value that is not a subschema');
  });

  it('so is one through an embedded $id resource, whatever base URI it resolves against', () => {
    const parameters = { type: 'object', $defs: { r: { $id: 'https://example.com/r', enum: [{ type: 'string' }] } }, properties: { a: { $ref: 'https://example.com/r#/enum/0' }, b: { $ref: 'other#/properties' } } };
    expect(() => engine([tool('sneaky', { parameters })])).toThrow('at /properties/a/$ref: "https://example.com/r#/enum/0" points at a value that is not a subschema');
  });

  it('a schema with more subschemas than ajv compiles quickly', () => {
    const parameters = { type: 'object', properties: Object.fromEntries(Array.from({ length: 1500 }, (_, index) => [`p${index}`, { type: 'string' }])) };
    expect(() => engine([tool('huge', { parameters })])).toThrow(/tool "huge" parameters is not a usable JSON Schema: at .*more than 1000 subschemas/);
  });

  it('a pattern that compiles to more than 10,000 instructions (compiling costs the host 0.7 µs each), or patterns that do in all', () => {
    const alternation = (count: number) => Array.from({ length: count }, (_, index) => `x${index}[ab]{1000}`).join('|');
    expect(() => engine([tool('big', { parameters: { type: 'object', properties: { s: { type: 'string', pattern: alternation(11) } } } })])).toThrow(
      /tool "big" parameters is not a usable JSON Schema: at \/properties\/s\/pattern: pattern "x0\[ab\]\{1000\}\|.*compiles to \d+ instructions, more than 10000/,
    );
    const properties = Object.fromEntries(Array.from({ length: 6 }, (_, index) => [`p${index}`, { type: 'string', pattern: `${alternation(9)}|y${index}` }]));
    expect(() => engine([tool('many', { parameters: { type: 'object', properties } })])).toThrow(/at \/properties\/p5\/pattern: the schema's patterns compile to more than 50000 instructions in all/);
    expect(() => engine([tool('honest', { parameters: { type: 'object', properties: { id: { type: 'string', pattern: '^[a-z0-9_-]{1,64}$' } } } })])).not.toThrow();
    // A class is one instruction however many ranges it lists: its text is bounded instead (1.7 MB took 0.45 s to load).
    expect(() => engine([tool('long', { parameters: { type: 'object', properties: { s: { type: 'string', pattern: `[${'a'.repeat(10_001)}]` } } } })])).toThrow(/is 10003 characters long, more than 10000/);
    const wordy = Object.fromEntries(Array.from({ length: 11 }, (_, index) => [`p${index}`, { type: 'string', pattern: `[${'a'.repeat(9_990)}]${index}` }]));
    expect(() => engine([tool('wordy', { parameters: { type: 'object', properties: wordy } })])).toThrow(/at \/properties\/p10\/pattern: the schema's patterns have more than 100000 characters in all/);
  });

  it('a root $id stays private to its tool: two tools may share one, and no other tool can $ref it', () => {
    const shared = { $id: 'https://example.com/shared', type: 'object', properties: { n: { type: 'number' } } };
    expect(() => engine([tool('one', { parameters: shared }), tool('two', { parameters: { ...shared } })])).not.toThrow();
    expect(() => engine([tool('one', { parameters: shared }), tool('three', { parameters: { type: 'object', $ref: 'https://example.com/shared#/properties/n' } })])).toThrow(/tool "three" parameters is not a usable JSON Schema/);
  });

  it('dependentRequired is data, not a subschema: accepted, and it checks what it says', async () => {
    const parameters = { type: 'object', properties: { card: { type: 'string' }, billing: { type: 'string' } }, dependentRequired: { card: ['billing'] } };
    const subject = engine([tool('ship', { parameters })]);
    const [alone, both, neither] = await subject.run([call('ship', { card: 'x' }), call('ship', { card: 'x', billing: 'y' }), call('ship', {})]);
    expect(error(alone!)).toMatchObject({ code: 'INVALID_ARGS', message: expect.stringContaining('billing') });
    expect(both!.isError).toBe(false);
    expect(neither!.isError).toBe(false);
  });

  it('a $ref to a meta-schema ajv ships still works', async () => {
    const subject = engine([tool('meta', { parameters: { type: 'object', properties: { schema: { $ref: 'https://json-schema.org/draft/2020-12/schema' } } } })]);
    const [good, bad] = await subject.run([call('meta', { schema: { type: 'string' } }), call('meta', { schema: { type: 7 } })]);
    expect(good!.isError).toBe(false);
    expect(bad!.isError).toBe(true);
  });
});
