// ajv-formats checks most formats with ECMAScript regular expressions; some backtrack
// (`url` is quadratic: 12,000 characters take a quarter of a second). Every format that
// is a regular expression is re-registered on the linear engine with the same pattern;
// the three with lookahead get the lookahead's condition as plain code.
import type { Ajv, Format } from 'ajv';
import { fullFormats } from 'ajv-formats/dist/formats.js';
import { compileLinear } from './linear-regexp.js';

type FormatTest = (value: string) => boolean;

function linearTest(regexp: RegExp): FormatTest {
  const compiled = compileLinear(regexp.source, regexp.flags.includes('i'), true);
  return (value) => compiled.test(value);
}

/** `regexp` with its lookahead groups removed; each must be covered by `extra`. */
function withoutLookahead(regexp: RegExp, lookaheads: readonly string[]): RegExp {
  let source = regexp.source;
  for (const lookahead of lookaheads) {
    if (!source.includes(lookahead)) throw new Error(`ajv-formats changed: ${lookahead} not found in ${regexp.source.slice(0, 40)}…`);
    source = source.replace(lookahead, '');
  }
  return new RegExp(source, regexp.flags);
}

const PRIVATE_HOST = compileLinear('^(?:(?:10|127)(?:\\.\\d{1,3}){3}|(?:169\\.254|192\\.168)(?:\\.\\d{1,3}){2}|172\\.(?:1[6-9]|2\\d|3[0-1])(?:\\.\\d{1,3}){2})', false, true);

function special(name: string, regexp: RegExp): FormatTest | undefined {
  switch (name) {
    case 'hostname': {
      // (?=.{1,253}\.?$): at most 253 characters, or 254 with a trailing dot.
      const test = linearTest(withoutLookahead(regexp, ['(?=.{1,253}\\.?$)']));
      return (value) => (value.length <= 253 || (value.length === 254 && value.endsWith('.'))) && test(value);
    }
    case 'duration': {
      // P(?!$): not "P" alone; T(?=\d): a T is followed by a digit, so never last.
      const test = linearTest(withoutLookahead(regexp, ['(?!$)', '(?=\\d)']));
      return (value) => value !== 'P' && !value.endsWith('T') && test(value);
    }
    case 'url': {
      // The three (?!…) exclude private IPv4 hosts; checked on the host after any user info.
      const lookaheads = ['(?!(?:10|127)(?:\\.\\d{1,3}){3})', '(?!(?:169\\.254|192\\.168)(?:\\.\\d{1,3}){2})', '(?!172\\.(?:1[6-9]|2\\d|3[0-1])(?:\\.\\d{1,3}){2})'];
      const test = linearTest(withoutLookahead(regexp, lookaheads));
      return (value) => {
        if (!test(value)) return false;
        const authority = value.slice(value.indexOf('//') + 2).split(/[/?#]/, 1)[0]!;
        return !PRIVATE_HOST.test(authority.slice(authority.lastIndexOf('@') + 1));
      };
    }
    default:
      return undefined;
  }
}

/** Replaces `from` (which must be there) with `to`, `count` times. */
function edit(source: string, from: string, to: string, count = 1): string {
  let out = source;
  for (let index = 0; index < count; index += 1) {
    if (!out.includes(from)) throw new Error(`ajv-formats changed: ${from} not found in uri-reference`);
    out = out.replace(from, to);
  }
  return out;
}

/**
 * ajv-formats' `uri` is a function over a private regular expression that backtracks
 * (320,000 characters: 25 ms, growing faster than the input). That expression is
 * `uri-reference`'s with the scheme and the hier-part required and no `"` allowed.
 */
function linearUri(uriReference: RegExp): FormatTest {
  let source = edit(uriReference.source, '[a-z0-9+\\-.]*:)?', '[a-z0-9+\\-.]*:)');
  source = edit(source, ')*)*)?(?:\\?', ')*)*)(?:\\?');
  source = edit(source, `'"`, `'`, 7);
  const test = linearTest(new RegExp(source, uriReference.flags));
  return (value) => /\/|:/.test(value) && test(value);
}

/** The linear-time tests, compiled once per process (RE2JS compilation is the costly part) and shared by every ajv instance. */
let linearFormats: [string, FormatTest][] | undefined;

function compileLinearFormats(): [string, FormatTest][] {
  const tests: [string, FormatTest][] = [];
  for (const [name, definition] of Object.entries(fullFormats)) {
    if (!(definition instanceof RegExp)) continue;
    tests.push([name, special(name, definition) ?? linearTest(definition)]);
  }
  tests.push(['uri', linearUri(fullFormats['uri-reference'] as RegExp)]);
  return tests;
}

/** Replaces every regular-expression format of ajv-formats, and `uri`, with a linear-time one. */
export function useLinearFormats(ajv: Pick<Ajv, 'addFormat'>): void {
  linearFormats ??= compileLinearFormats();
  for (const [name, test] of linearFormats) ajv.addFormat(name, { type: 'string', validate: test } satisfies Format);
}
