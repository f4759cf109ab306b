// The capability round trip's subjects: a host function (the same {a, b} -> {sum}), and a
// plugin tool that asks it `n` times through ctx.capabilities. A call with n requests less
// a call with none, divided by n, is what one request costs from the plugin to the host
// and back; calling the function directly in this process is the trusted baseline.
import type { Capability, CapabilityContext } from '@airlock/sandbox';

export const CAPABILITY_NAME = 'bench.sum';
/** Requests per measured call: enough that the difference stands out of a call's own noise. */
export const REQUESTS_PER_CALL = 10;

export const hostSum: Capability = (argument) => {
  const { a, b } = argument as { a: number; b: number };
  return { sum: a + b };
};

/** What a capability sees of a call, for the direct baseline (it reads none of it). */
export const directContext: CapabilityContext = { tenant: 'default', plugin: 'bench-capability', tool: 'cap_sum', callId: 'direct', signal: new AbortController().signal };

export const capabilityArgs = (requests: number): string => JSON.stringify({ a: 20, b: 22, n: requests });

/** A plugin module whose `cap_sum` asks the host's bench.sum `n` times, one after another. */
export const CAPABILITY_PLUGIN = `export default { tools: [
  { name: 'cap_sum', description: 'Adds two numbers through the host, n times.',
    parameters: { type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' }, n: { type: 'integer' } }, required: ['a', 'b', 'n'] },
    async execute({ a, b, n }, ctx) {
      let answer = null;
      for (let i = 0; i < n; i += 1) answer = await ctx.capabilities['${CAPABILITY_NAME}']({ a, b });
      return answer;
    } },
] };`;
