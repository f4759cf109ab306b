// docs/errors.md and RESULT_CODES must agree: every code documented exactly once,
// nothing documented that the code does not have.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESULT_CODES } from '../src/index.js';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');
const tableSection = doc.slice(doc.indexOf('## Result codes'), doc.indexOf('## Thrown errors'));
const documented = [...tableSection.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]);

describe('error catalogue', () => {
  it('documents every result code exactly once', () => {
    for (const code of RESULT_CODES) expect(documented.filter((name) => name === code)).toHaveLength(1);
  });

  it('documents no code that does not exist', () => {
    expect(documented.filter((name) => !(RESULT_CODES as readonly string[]).includes(name!))).toEqual([]);
  });

  it('each code is a stable upper-case name', () => {
    expect(new Set(RESULT_CODES).size).toBe(RESULT_CODES.length);
    for (const code of RESULT_CODES) expect(code).toMatch(/^[A-Z][A-Z_]+$/);
  });
});
