// Pure functions of their arguments: safe to run in parallel.
const pure = () => true;

export default {
  tools: [
    {
      name: 'word_count',
      description: 'Count the words, lines and characters of a text.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', description: 'The text to count.' } },
        required: ['text'],
        additionalProperties: false,
      },
      output: {
        type: 'object',
        properties: { words: { type: 'integer' }, lines: { type: 'integer' }, characters: { type: 'integer' } },
        required: ['words', 'lines', 'characters'],
      },
      isConcurrencySafe: pure,
      execute({ text }) {
        const words = text.trim() === '' ? 0 : text.trim().split(/\s+/).length;
        return { words, lines: text.split('\n').length, characters: [...text].length };
      },
    },
    {
      name: 'slugify',
      description: 'Turn a title into a URL slug (lowercase ASCII words joined by "-").',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string', minLength: 1, maxLength: 500 } },
        required: ['text'],
        additionalProperties: false,
      },
      isConcurrencySafe: pure,
      execute({ text }) {
        return text.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '');
      },
    },
    {
      name: 'extract_emails',
      description: 'List the distinct e-mail addresses found in a text.',
      parameters: {
        type: 'object',
        properties: { text: { type: 'string' } },
        required: ['text'],
        additionalProperties: false,
      },
      isConcurrencySafe: pure,
      execute({ text }) {
        const found = text.match(/[A-Za-z0-9._%+-]+@[A-Za-z0-9.-]+\.[A-Za-z]{2,}/g) ?? [];
        return [...new Set(found.map((address) => address.toLowerCase()))];
      },
    },
  ],
};
