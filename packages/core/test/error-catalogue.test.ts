// docs/errors.md and the code catalogues must agree: every code documented exactly once,
// nothing documented that the code does not have. Result codes (RESULT_CODES) are in the
// "Result codes" table; the codes of thrown errors (ERROR_CODES, every package) in "Thrown errors".
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, RESULT_CODES } from '../src/index.js';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** The codes in the first column of the tables of one `## ` section. */
function documentedIn(heading: string): string[] {
  const start = doc.indexOf(`\n## ${heading}\n`);
  if (start < 0) throw new Error(`docs/errors.md has no "## ${heading}" section`);
  const end = doc.indexOf('\n## ', start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((match) => match[1]!);
}

describe.each([
  ['Result codes', RESULT_CODES],
  ['Thrown errors', ERROR_CODES],
] as const)('docs/errors.md, %s', (heading, codes) => {
  const documented = documentedIn(heading);

  it('documents every code exactly once', () => {
    for (const code of codes) expect(documented.filter((name) => name === code), code).toHaveLength(1);
  });

  it('documents no code that does not exist', () => {
    expect(documented.filter((name) => !(codes as readonly string[]).includes(name))).toEqual([]);
  });

  it('each code is a stable upper-case name, listed once', () => {
    expect(new Set(codes).size).toBe(codes.length);
    for (const code of codes) expect(code).toMatch(/^[A-Z][A-Z_]+$/);
  });
});

it('no code is documented in both tables', () => {
  const results = new Set(documentedIn('Result codes'));
  expect(documentedIn('Thrown errors').filter((code) => results.has(code))).toEqual([]);
});

it('the exported catalogues cannot be changed by whoever imports them', () => {
  expect(Object.isFrozen(RESULT_CODES)).toBe(true);
  expect(Object.isFrozen(ERROR_CODES)).toBe(true);
});
