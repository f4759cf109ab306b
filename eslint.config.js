// Lint enforces the package boundaries of DESIGN.md instead of memory.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', 'examples/**/*.js', 'packages/cli/examples/**', 'test/fixtures/**', 'packages/*/test/fixtures/**', '.bench/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', setTimeout: 'readonly', clearTimeout: 'readonly', setInterval: 'readonly', clearInterval: 'readonly', performance: 'readonly', AbortController: 'readonly', AbortSignal: 'readonly', URL: 'readonly', structuredClone: 'readonly' } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
    },
  },
  {
    files: ['packages/core/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          { name: 'piscina', message: '@airlock/core must not import Piscina (DESIGN.md: packages).' },
          { name: 'isolated-vm', message: '@airlock/core must not import isolated-vm (DESIGN.md: packages).' },
          { name: '@airlock/sandbox', message: '@airlock/core must not depend on the sandbox.' },
          { name: '@airlock/cli', message: '@airlock/core must not depend on the CLI.' },
        ],
        patterns: [{ group: ['piscina/*', 'isolated-vm/*'], message: '@airlock/core must not import Piscina or isolated-vm.' }],
      }],
    },
  },
  {
    // The projection path names the fields it copies: no spread of a definition there.
    files: ['packages/core/src/tool/schema-of.ts', 'packages/core/src/providers/**/*.ts'],
    rules: {
      'no-restricted-syntax': ['error',
        { selector: 'SpreadElement', message: 'schema projection must name the fields it copies, never spread.' },
        { selector: 'ObjectExpression > SpreadElement', message: 'schema projection must name the fields it copies, never spread.' },
        { selector: "CallExpression[callee.object.name='Object'][callee.property.name='assign']", message: 'schema projection must not Object.assign a definition.' },
      ],
    },
  },
  {
    files: ['packages/sandbox/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', { paths: [{ name: '@airlock/cli', message: 'the sandbox must not depend on the CLI.' }] }],
    },
  },
);
