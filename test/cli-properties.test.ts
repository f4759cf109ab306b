// Property-based, end to end: whatever arrives on standard input, `airlock run -` exits 0
// with a report or 2 with exactly one line on stderr. Never a stack trace, never a hang.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { airlock, oneLine } from './support/run-cli.js';

const call = fc.record({
  id: fc.string({ maxLength: 8 }),
  type: fc.constant('function'),
  function: fc.record({ name: fc.constantFrom('slugify', 'word_count', 'fibonacci', 'nope', '__proto__'), arguments: fc.oneof(fc.json({ maxDepth: 3 }), fc.string({ maxLength: 40 })) }),
});
const input = fc.oneof(
  fc.string({ maxLength: 200 }),
  fc.json({ maxDepth: 4 }),
  fc.record({ role: fc.constant('assistant'), tool_calls: fc.array(fc.oneof(call, fc.anything({ maxDepth: 2 })), { maxLength: 4 }) }).map((m) => JSON.stringify(m)),
  fc.record({ messages: fc.array(fc.anything({ maxDepth: 2 }), { maxLength: 3 }) }).map((m) => JSON.stringify(m)),
  fc.constantFrom('', '   ', '\u0000', '{"role":"assistant","content":[{"type":"tool_use","id":"x","name":"slugify","input":{"text":"A"}}]}'),
);

describe('airlock run - with arbitrary input', () => {
  it('exits 0 with a report, or 2 with one line', async () => {
    await fc.assert(
      fc.asyncProperty(input, async (stdin) => {
        const { code, stdout, stderr } = await airlock(['run', '-', '--plugins', 'examples/plugins', '--json'], { input: stdin });
        expect([0, 2]).toContain(code);
        if (code === 0) {
          const report = JSON.parse(stdout) as { results: unknown[]; messages: unknown[] };
          expect(Array.isArray(report.results)).toBe(true);
        } else {
          expect(oneLine(stderr)).toMatch(/^airlock: /);
        }
      }),
      { numRuns: 16, seed: 20261130 },
    );
  }, 120_000);
});
