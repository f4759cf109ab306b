// Many calls sharing one caller signal: each follows it without adding its own listener,
// so a busy turn (or a server's shared signal) never trips MaxListenersExceededWarning,
// and cancellation still reaches every call.
import { afterEach, describe, expect, it } from 'vitest';
import { defineTool, type JsonValue, type ToolFailure } from '../src/index.js';
import { deferred, engine } from './helpers.js';

const warnings: Error[] = [];
const onWarning = (warning: Error): void => {
  warnings.push(warning);
};
afterEach(() => {
  process.off('warning', onWarning);
  warnings.length = 0;
});

describe('a shared caller signal', () => {
  it('carries one listener however many calls follow it, and cancels them all', async () => {
    process.on('warning', onWarning);
    const started = deferred();
    let running = 0;
    const waits = defineTool({
      name: 'waits',
      description: 'waits until cancelled',
      parameters: { type: 'object' },
      isConcurrencySafe: () => true,
      execute: (_args: JsonValue, exec) =>
        new Promise<JsonValue>((_resolve, reject) => {
          running += 1;
          if (running === 40) started.resolve();
          exec.signal.addEventListener('abort', () => reject(new Error('stopped')), { once: true });
        }),
    });
    const controller = new AbortController();
    const calls = Array.from({ length: 40 }, (_, index) => ({ id: `c${index}`, name: 'waits', arguments: '{}' }));
    const turn = engine([waits], { maxParallel: 40 }).run(calls, { signal: controller.signal });
    await started.promise;
    controller.abort();
    const results = await turn;
    expect(results.map((result) => (result as ToolFailure).error?.code)).toEqual(Array.from({ length: 40 }, () => 'ABORTED'));
    await new Promise((resolve) => setImmediate(resolve));
    expect(warnings.filter((warning) => warning.name === 'MaxListenersExceededWarning')).toEqual([]);
  });
});
