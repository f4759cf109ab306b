// --debug shows the failures the engine contained, on one escaped line plus the cause's
// stack; without it, nothing is printed and no observer is installed.
import { createEngine, defineTool } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { debugOnError } from '../src/support/debug-output.js';

function sink(): { stream: NodeJS.WritableStream; text: () => string } {
  const chunks: string[] = [];
  return { stream: { write: (chunk: string) => chunks.push(chunk) } as unknown as NodeJS.WritableStream, text: () => chunks.join('') };
}

describe('--debug output', () => {
  it('prints a failing preSchedule hook with its code, context and cause, and the call still runs', async () => {
    const out = sink();
    const onError = debugOnError(true, out.stream)!;
    const tool = defineTool({ name: 't', description: 't', parameters: { type: 'object' }, execute: () => 1 });
    const engine = createEngine({ tools: [tool], policy: { default: 'allow' }, preSchedule: () => Promise.reject(new Error('verdicts lost\u001b[2J')), observers: { onError } });
    const [result] = await engine.run([{ id: 'c1', name: 't', arguments: '{}' }], { tenant: 'acme' });
    expect(result?.isError).toBe(false);
    expect(out.text()).toMatch(/^airlock: debug: PRESCHEDULE_FAILED \(preSchedule, tenant acme\): /);
    expect(out.text()).toContain('verdicts lost');
    // What a hook threw is quoted, never obeyed by the terminal.
    expect(out.text()).not.toContain('\u001b');
  });

  it('is off unless asked for', () => {
    expect(debugOnError(false)).toBeUndefined();
  });
});
