// What a card shows is what the text says: every control, bidi and invisible character
// becomes a visible escape, through one function, in every card core builds or passes on.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { defineTool, escapeControls, genericCallCard, genericResultCard, type ToolResult } from '../src/index.js';
import { engine } from './helpers.js';

// U+2800 (Braille blank) and U+FFFC (object replacement) show as a blank or a box in place of something.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800\ufffc]|[\ud800-\udfff]/u;

describe('escapeControls', () => {
  it.each([
    ['\u001b[2J', '\\x1b[2J'],
    ['\u009b31m', '\\x9b31m'],
    ['a\rb\nc\td', 'a\\rb\\nc\\td'],
    ['\u0000\u007f\u0085', '\\x00\\x7f\\x85'],
    ['\u202egnp.exe', '\\u202egnp.exe'],
    ['\u2066x\u2069\u200f\u061c', '\\u2066x\\u2069\\u200f\\u061c'],
    ['a\u2028b\u2029', 'a\\u2028b\\u2029'],
    ['\u200b\ufeff\u00ad', '\\u200b\\ufeff\\xad'],
    ['\u{e0041}\u{e007f}', '\\u{e0041}\\u{e007f}'],
    ['\ud800 lone', '\\ud800 lone'],
    // Rendered as nothing too: variation selectors, the grapheme joiner, Hangul fillers.
    ['/srv/ws/ok\ufe0f\u034f\u3164\u{e0100}', '/srv/ws/ok\\ufe0f\\u034f\\u3164\\u{e0100}'],
    // Shown as a blank or a box in place of something.
    ['a\u2800b\ufffcc', 'a\\u2800b\\ufffcc'],
    ['\u001b]8;;https://evil.example\u001b\\click\u001b]8;;\u001b\\', '\\x1b]8;;https://evil.example\\x1b\\click\\x1b]8;;\\x1b\\'],
    ['\u001b]0;title\u0007', '\\x1b]0;title\\x07'],
    ['\u009d8;;x\u009c', '\\x9d8;;x\\x9c'],
    ['caf\u00e9 \u65e5\u672c \u{1f600} /etc/hosts', 'caf\u00e9 \u65e5\u672c \u{1f600} /etc/hosts'],
  ])('%j becomes %j', (raw, shown) => {
    expect(escapeControls(raw)).toBe(shown);
  });

  it('leaves nothing invisible, is idempotent, and keeps visible text as it is', () => {
    fc.assert(fc.property(fc.string({ unit: 'binary' }), (text) => {
      const shown = escapeControls(text);
      expect(shown).not.toMatch(INVISIBLE);
      expect(escapeControls(shown)).toBe(shown);
      if (!INVISIBLE.test(text)) expect(shown).toBe(text);
    }), { numRuns: 2000 });
  });
});

describe('cards', () => {
  const hostile = '\u001b[2J\u001b[H\r✓ ok\u202e\u0085';
  const failed: ToolResult = { callId: 'c', name: `x${hostile}`, content: hostile, durationMs: 1, isError: true, error: { code: 'TOOL_ERROR', message: hostile } };

  it('generic cards escape names, labels, values and bodies', () => {
    const cards = [genericCallCard(`n${hostile}`, { [`k${hostile}`]: hostile, nested: { v: hostile } }), genericResultCard(failed), genericResultCard({ ...failed, isError: false, value: null } as unknown as ToolResult)];
    expect(cards[1]!.body).toBe('\\x1b[2J\\x1b[H\\r✓ ok\\u202e\\x85');
    for (const card of cards) expect(JSON.stringify(card)).not.toMatch(INVISIBLE);
  });

  it('the generic card tells a line break in an argument from a backslash and an n: such strings are shown as JSON', () => {
    const value = (arg: string): string | undefined => genericCallCard('t', { arg }).fields?.[0]?.value;
    expect(value('a\nb')).toBe('"a\\nb"');
    expect(value('a\\nb')).toBe('"a\\\\nb"');
    expect(value('a\u202eb')).toBe('"a\\u202eb"');
    expect(value('"quoted"')).toBe('"\\"quoted\\""');
    expect(value('/tmp/plain path.txt')).toBe('/tmp/plain path.txt');
    expect(genericCallCard('t', { n: 1, list: ['x'] }).fields?.map((field) => field.value)).toEqual(['1', '["x"]']);
  });

  it('the generic card shows arguments nested too deep for JSON.stringify as such, instead of throwing', () => {
    let deep: unknown = 'bottom';
    for (let i = 0; i < 20_000; i += 1) deep = { a: deep };
    // Node 20's JSON.stringify overflows the stack here (Node 26's does not): either way, no throw.
    const [shown, ok] = genericCallCard('t', { deep, ok: 'shown' } as never).fields ?? [];
    expect(shown?.value).toMatch(/^\(cannot be shown: nested too deep\)$|^\{"a":\{"a":/);
    expect(ok).toEqual({ label: 'ok', value: 'shown' });
    // The same refusal on any Node, as JSON.stringify throws it.
    const unshowable = { toJSON: () => { throw new RangeError('Maximum call stack size exceeded'); } };
    expect(genericCallCard('t', { deep: unshowable } as never).fields).toEqual([{ label: 'deep', value: '(cannot be shown: nested too deep)' }]);
  });

  it('a tool\'s own cards are escaped too, and a malformed one becomes text', async () => {
    const own = defineTool({
      name: 'own',
      description: 'own cards',
      parameters: { type: 'object' },
      execute: () => null,
      presentCall: () => ({ title: hostile, body: hostile, fields: [{ label: hostile, value: hostile }] }),
      presentResult: () => ({ title: 42, fields: 'nope' }) as never,
    });
    const e = engine([own]);
    const [result] = await e.run([{ id: 'c', name: 'own', arguments: '{}' }]);
    const call = e.presentCall('own', {});
    expect(JSON.stringify(call)).not.toMatch(INVISIBLE);
    expect(call.title).toContain('\\x1b[2J');
    expect(e.presentResult({}, result!)).toEqual({ title: '42' });
    expect(JSON.stringify(e.presentCall(`unknown${hostile}`, undefined))).not.toMatch(INVISIBLE);
  });
});
