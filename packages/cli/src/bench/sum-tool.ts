// The trivial tool every peer runs: {a, b} -> {sum}, one call at a time, the same source
// in Airlock's plugin, the raw isolated-vm baselines and QuickJS.
export const SUM_ARGS_JSON = '{"a":20,"b":22}';

/** The tool's body as a function expression over its JSON arguments, answering JSON. */
export const SUM_FUNCTION = '(json) => { const { a, b } = JSON.parse(json); return JSON.stringify({ sum: a + b }); }';

const SUM_PARAMETERS = "{ type: 'object', properties: { a: { type: 'number' }, b: { type: 'number' } }, required: ['a', 'b'] }";

/** An Airlock plugin module with `<prefix>_sum` (parallel-safe) as its only tool. */
export function sumPlugin(prefix: string): string {
  return `export default { tools: [
  { name: '${prefix}_sum', description: 'Adds two numbers.', parameters: ${SUM_PARAMETERS}, isConcurrencySafe: () => true, execute: ({ a, b }) => ({ sum: a + b }) },
] };`;
}

/**
 * The same tool in a plugin that also reads two of the realm's Web globals (URL and
 * TextEncoder), as many real tools do: what loading them costs a new tenant's first call.
 */
export function webGlobalsSumPlugin(prefix: string): string {
  return `export default { tools: [
  { name: '${prefix}_sum', description: 'Adds two numbers.', parameters: ${SUM_PARAMETERS}, isConcurrencySafe: () => true,
    execute: ({ a, b }) => ({ sum: a + b, host: new URL('https://example.com/sum').host, bytes: new TextEncoder().encode('sum').length }) },
] };`;
}

/** The same tool as a module with no Airlock around it, for raw isolated-vm. */
export const SUM_MODULE = `export default ${SUM_FUNCTION};`;
