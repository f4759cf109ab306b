// The human output of `airlock run`: one card per call (title, outcome, timing, fields, the
// result the model reads), long text clipped, and a summary line that counts outcomes.
import { createEngine, defineTool, type ToolResult } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { renderCards } from '../src/support/render-cards.js';
import { stylist } from '../src/support/style.js';

const engine = createEngine({
  tools: [
    defineTool({
      name: 'write_file',
      description: 'write',
      parameters: { type: 'object' },
      execute: () => null,
      presentCall: (args) => ({ title: `Write ${String(args.path)}`, fields: [{ label: 'bytes', value: String(String(args.content).length) }] }),
    }),
  ],
  policy: { default: 'allow' },
});
const plain = stylist(false);

const ok = (content: string, extra: Partial<ToolResult> = {}): ToolResult => ({ callId: 'c1', name: 'write_file', content, durationMs: 12.34, isError: false, value: null, ...extra }) as ToolResult;
const failed: ToolResult = { callId: 'c2', name: 'write_file', content: 'TIMEOUT: too slow', durationMs: 1000, isError: true, error: { code: 'TIMEOUT', message: 'too slow' } };

describe('renderCards', () => {
  it('shows the tool\'s own card, the outcome, the duration and call id, its fields and the result', () => {
    const out = renderCards(engine, [{ name: 'write_file', args: { path: 'notes.md', content: 'hello' }, result: ok('written') }], plain);
    expect(out.split('\n')).toEqual(['Write notes.md  ✓ ok  12.3 ms · c1', '  bytes: 5', '  → written', '', '1 call: 1 succeeded, 0 failed', '']);
  });

  it('a call id of any length (the model chose it) costs the card header a bounded line', () => {
    const out = renderCards(engine, [{ name: 'write_file', args: { path: 'a', content: '' }, result: ok('done', { callId: 'D'.repeat(200_000) }) }], plain);
    const header = out.split('\n')[0]!;
    expect(header.length).toBeLessThan(400);
    expect(header).toContain('(200000 chars)');
  });

  it('a failure shows its code; the summary counts failures; a person\'s wait for approval is shown', () => {
    const out = renderCards(engine, [
      { name: 'write_file', args: { path: 'a', content: '' }, result: ok('done', { approvalMs: 2500 }) },
      { name: 'write_file', args: { path: 'b', content: '' }, result: failed },
    ], plain);
    expect(out).toContain('Write a  ✓ ok  12.3 ms · 2.5 s waiting for approval · c1');
    expect(out).toContain('Write b  ✗ TIMEOUT  1000.0 ms · c2');
    expect(out.trimEnd().split('\n').at(-1)).toBe('2 calls: 1 succeeded, 1 failed');
  });

  it('clips long text to at most 400 characters, ending with an ellipsis', () => {
    const out = renderCards(engine, [{ name: 'write_file', args: { path: 'p'.repeat(1000), content: '' }, result: ok('y'.repeat(1000)) }], plain);
    const [title] = out.split('\n');
    expect(title).toMatch(new RegExp(`^Write ${'p'.repeat(393)}…  ✓ ok`));
    const result = out.split('\n').find((text) => text.startsWith('  → ')) as string;
    expect(result.length).toBeLessThanOrEqual(4 + 400);
    expect(result.endsWith('…')).toBe(true);
  });

  it('colours only when asked: red for a failure, green for success', () => {
    const out = renderCards(engine, [{ name: 'write_file', args: { path: 'b', content: '' }, result: failed }], stylist(true));
    expect(out).toContain('\u001b[31m✗ TIMEOUT\u001b[39m');
    expect(renderCards(engine, [{ name: 'write_file', args: { path: 'a', content: '' }, result: ok('x') }], stylist(true))).toContain('\u001b[32m✓ ok\u001b[39m');
  });
});
