// Property-based: whatever a model or a transcript sends, no exception escapes the
// engine and every call gets exactly one result, with a stable code when it fails.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AirlockError, RESULT_CODES, createEngine, defineTool, detectToolCallMessage, type ProviderId, type ToolResult } from '../src/index.js';

const engine = createEngine({
  policy: { default: 'allow', rules: [{ tool: 'write_file', when: { path: '/etc/**' }, decision: 'deny' }] },
  tools: [
    defineTool({
      name: 'write_file',
      description: 'Write a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' }, content: { type: 'string', maxLength: 1000 } }, required: ['path'], additionalProperties: false },
      isConcurrencySafe: (args) => (args as { path: string }).path.startsWith('/tmp'),
      execute: (args) => ({ wrote: (args as { path: string }).path }),
    }),
    defineTool({ name: 'echo', description: 'Echo.', parameters: { type: 'object' }, isConcurrencySafe: () => true, execute: (args) => args }),
  ],
  limits: { maxArgumentBytes: 4096, maxArgumentDepth: 16 },
});

const codes: ReadonlySet<string> = new Set(RESULT_CODES);
function wellFormed(results: ToolResult[], expected: number): void {
  expect(results).toHaveLength(expected);
  for (const result of results) {
    expect(Object.isFrozen(result)).toBe(true);
    expect(typeof result.content).toBe('string');
    if (result.isError) expect(codes.has(result.error.code)).toBe(true);
  }
}

const name = fc.oneof(fc.constantFrom('write_file', 'echo', 'constructor', '__proto__', ''), fc.string({ maxLength: 20 }));
const argsText = fc.oneof(fc.json({ maxDepth: 4 }), fc.string({ maxLength: 200 }), fc.constantFrom('{', '{"path":', '[]', 'null', '{"path":"/etc/x"}', '{"path":"/tmp/../etc/hosts"}'));
const argsValue = fc.oneof(fc.jsonValue({ maxDepth: 4 }), fc.anything({ maxDepth: 3, withBigInt: true, withDate: true, withMap: true, withNullPrototype: true }));

/** Transcripts of each provider's shape, with malformed parts mixed in on purpose. */
const transcripts: Record<Exclude<ProviderId, 'mcp'>, fc.Arbitrary<{ message: unknown }>> = {
  openai: fc.record({ message: fc.record({ role: fc.constant('assistant'), tool_calls: fc.array(fc.oneof(fc.record({ id: fc.string(), type: fc.constant('function'), function: fc.record({ name, arguments: argsText }) }), fc.anything()), { maxLength: 8 }) }) }),
  anthropic: fc.record({ message: fc.record({ role: fc.constant('assistant'), content: fc.array(fc.oneof(fc.record({ type: fc.constant('tool_use'), id: fc.string(), name, input: argsValue }), fc.record({ type: fc.constant('text'), text: fc.string() }), fc.anything()), { maxLength: 8 }) }) }),
  responses: fc.record({ message: fc.record({ output: fc.array(fc.oneof(fc.record({ type: fc.constant('function_call'), call_id: fc.string(), name, arguments: argsText }), fc.anything()), { maxLength: 8 }) }) }),
  gemini: fc.record({ message: fc.record({ role: fc.constant('model'), parts: fc.array(fc.oneof(fc.record({ functionCall: fc.record({ name, args: argsValue }) }), fc.anything()), { maxLength: 8 }) }) }),
};

describe('properties', () => {
  for (const [provider, arbitrary] of Object.entries(transcripts)) {
    it(`${provider}: any transcript is either refused with a coded error or answered once per call`, async () => {
      await fc.assert(
        fc.asyncProperty(arbitrary, async ({ message }) => {
          let outcome;
          try {
            outcome = await engine.runMessage(provider as ProviderId, message);
          } catch (error) {
            expect(AirlockError.isInstance(error) && error.code === 'INVALID_PROVIDER_MESSAGE').toBe(true);
            return;
          }
          const calls = (await import('../src/index.js')).PROVIDERS[provider as ProviderId].parseCalls(message);
          wellFormed(outcome.results, calls.length);
          // A call with an id is answered under it; one without (a malformed call) under a stand-in no call of the turn carries.
          const ids = new Set(calls.map((call) => call.id));
          calls.forEach((call, index) => {
            if (typeof call.id === 'string' && call.id !== '') expect(outcome.results[index]!.callId).toBe(call.id);
            else {
              const result = outcome.results[index]!;
              expect(result.isError && result.error.code).toBe('INVALID_ARGS');
              expect(ids.has(outcome.results[index]!.callId)).toBe(false);
            }
          });
        }),
        { numRuns: 150 },
      );
    });
  }

  it('anything at all given to the transcript detector is a coded error or a detected message', () => {
    fc.assert(
      fc.property(fc.anything({ maxDepth: 4 }), (input) => {
        try {
          detectToolCallMessage(input);
        } catch (error) {
          expect(AirlockError.isInstance(error)).toBe(true);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('any argument string or value gets exactly one result; a failure is INVALID_ARGS, UNKNOWN_TOOL or PERMISSION_DENIED', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.record({ id: fc.string(), name, arguments: fc.oneof(argsText, argsValue) }), { maxLength: 6 }), async (calls) => {
        const results = await engine.run(calls as never);
        wellFormed(results, calls.length);
        for (const result of results) if (result.isError) expect(['INVALID_ARGS', 'UNKNOWN_TOOL', 'PERMISSION_DENIED']).toContain(result.error.code);
      }),
      { numRuns: 300 },
    );
  });
});
