// A request of a call that has ended is never answered, and nothing of it outlives the
// request: whatever a relay chained on the withheld answer (the request message it would
// reply to) is garbage once the request is.
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { describe, expect, it } from 'vitest';
import { capabilityHandler, type Capability } from '../src/plugin/capability-handler.js';
import type { LoadedPlugin } from '../src/plugin/loaded-plugin.js';

setFlagsFromString('--expose-gc');
const collectGarbage = runInNewContext('gc') as () => void;

const plugin = { spec: { capabilities: ['slow'] } } as unknown as LoadedPlugin;

function handlerFor(capability: Capability, signal: AbortSignal): ReturnType<typeof capabilityHandler> {
  const context = { tenant: 't', plugin: 'p', tool: 'x', callId: 'c', signal };
  return capabilityHandler(plugin, new Map([['slow', capability]]), context, { requests: 0, bytesIn: 0, bytesOut: 0 });
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** Sends one request as a relay does, its reply holding `message`; returns a weak view of the message. */
function relay(handler: ReturnType<typeof capabilityHandler>): WeakRef<object> {
  const message = { json: 'x'.repeat(1024) };
  handler('slow', '{}').then(
    () => message,
    () => message,
  );
  return new WeakRef(message);
}

describe('capability requests of an ended call', () => {
  it('are never answered', async () => {
    const ended = AbortSignal.abort();
    let settled = false;
    void handlerFor(() => null, ended)('slow', '{}').then(() => (settled = true), () => (settled = true));
    for (let i = 0; i < 5; i += 1) await turn();
    expect(settled).toBe(false);
  });

  it('leave nothing a relay chained on them alive, asked after the end or answered after it', async () => {
    const ended = AbortSignal.abort();
    const askedLate = relay(handlerFor(() => null, ended));
    const call = new AbortController();
    let answer!: () => void;
    const answeredLate = relay(handlerFor(() => new Promise((resolve) => (answer = () => resolve(null))), call.signal));
    call.abort();
    answer();
    for (let i = 0; i < 3; i += 1) await turn();
    collectGarbage();
    expect(askedLate.deref()).toBeUndefined();
    expect(answeredLate.deref()).toBeUndefined();
  });
});
