// fibonacci is naive on purpose: large n shows the host's CPU limit at work.
function fib(n) {
  return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

export default {
  tools: [
    {
      name: 'fibonacci',
      description: 'The n-th Fibonacci number (naive recursion; large n is slow).',
      parameters: {
        type: 'object',
        properties: { n: { type: 'integer', minimum: 0, maximum: 90 } },
        required: ['n'],
        additionalProperties: false,
      },
      isConcurrencySafe: () => true,
      execute({ n }) {
        return fib(n);
      },
    },
    {
      name: 'statistics',
      description: 'Mean, median, minimum and maximum of a list of numbers.',
      parameters: {
        type: 'object',
        properties: { values: { type: 'array', items: { type: 'number' }, minItems: 1, maxItems: 100000 } },
        required: ['values'],
        additionalProperties: false,
      },
      isConcurrencySafe: () => true,
      execute({ values }) {
        const sorted = [...values].sort((a, b) => a - b);
        const middle = Math.floor(sorted.length / 2);
        const median = sorted.length % 2 === 0 ? (sorted[middle - 1] + sorted[middle]) / 2 : sorted[middle];
        return { mean: values.reduce((sum, v) => sum + v, 0) / values.length, median, min: sorted[0], max: sorted[sorted.length - 1] };
      },
    },
  ],
};
