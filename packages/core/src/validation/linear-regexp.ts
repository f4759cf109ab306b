// Regular expressions from plugin schemas run on RE2JS, a pure-JS port of RE2: time linear
// in the input, so `^(a+)+$` cannot hold the host's event loop. What RE2 cannot do in
// linear time (lookaround, backreferences) fails to compile, and the schema is refused.
import type { RegExpEngine, RegExpLike } from 'ajv/dist/types/index.js';
import { RE2JS } from 're2js';

// ECMAScript's \s (WhiteSpace and LineTerminator), written for RE2; RE2's own \s is ASCII only.
const JS_SPACE = '\\t\\n\\x{0B}\\f\\r \\x{A0}\\x{1680}\\x{2000}-\\x{200A}\\x{2028}\\x{2029}\\x{202F}\\x{205F}\\x{3000}\\x{FEFF}';
// Its complement, for \S inside a class (RE2's \S there leaves out only ASCII space: `[\S ]`,
// meant as "one line", let U+2028 through: an outside tester's find).
const JS_NOT_SPACE = '\\x{0}-\\x{8}\\x{E}-\\x{1F}\\x{21}-\\x{9F}\\x{A1}-\\x{167F}\\x{1681}-\\x{1FFF}\\x{200B}-\\x{2027}\\x{202A}-\\x{202E}\\x{2030}-\\x{205E}\\x{2060}-\\x{2FFF}\\x{3001}-\\x{FEFE}\\x{FF00}-\\x{10FFFF}';
// ECMAScript's `.` stops at every line terminator; RE2's only at \n.
const JS_DOT = '[^\\n\\r\\x{2028}\\x{2029}]';

/** Rewrites the few escapes whose meaning differs between ECMAScript and RE2 (input already in RE2 syntax). */
function alignWithEcmaScript(source: string): string {
  let out = '';
  let inClass = false;
  for (let index = 0; index < source.length; index += 1) {
    const char = source[index]!;
    if (char === '\\' && index + 1 < source.length) {
      const next = source[index + 1]!;
      index += 1;
      if (next === 's') out += inClass ? JS_SPACE : `[${JS_SPACE}]`;
      else if (next === 'S') out += inClass ? JS_NOT_SPACE : `[^${JS_SPACE}]`;
      // In a class, ECMAScript's \b is a backspace; RE2 has no such escape.
      else if (next === 'b' && inClass) out += '\\x{8}';
      else out += `\\${next}`;
      continue;
    }
    if (inClass) {
      if (char === ']') inClass = false;
    } else if (char === '[') {
      // ECMAScript's `[]` is a class that matches nothing; RE2 would read `]` as a member.
      if (source[index + 1] === ']') {
        out += '[^\\x00-\\x{10FFFF}]';
        index += 1;
        continue;
      }
      inClass = true;
    } else if (char === '.') {
      out += JS_DOT;
      continue;
    }
    out += char;
  }
  return out;
}

/**
 * Instructions one pattern may compile to. Compiling takes about 0.7 µs an instruction on
 * the host's thread (a 15,000-character alternation of `{1000}` repetitions: a million
 * instructions, 0.4 s), and matching may take 12 ns an instruction per character. Honest
 * patterns compile to tens or hundreds (`^[a-z0-9_-]{1,64}$`: 131).
 */
export const MAX_PATTERN_INSTRUCTIONS = 10_000;

/**
 * Characters one pattern may have: a class is one instruction however many ranges it lists,
 * and parsing them is what costs (a 1.7 MB class took 0.45 s to load). Honest patterns are
 * tens or hundreds of characters.
 */
export const MAX_PATTERN_CHARS = 10_000;

/** Compiled programs, shared by the load checks, the meter's weights and ajv's instances; dropped when they grow large. */
const compiledPrograms = new Map<string, RE2JS>();
let cachedInstructions = 0;
const MAX_CACHED_INSTRUCTIONS = 200_000;

class PatternRefused extends Error {}

function compileRe2(pattern: string, caseInsensitive: boolean): RE2JS {
  const key = `${caseInsensitive ? 'i' : '-'}${pattern}`;
  const cached = compiledPrograms.get(key);
  if (cached !== undefined) return cached;
  const shown = JSON.stringify(pattern.length > 80 ? `${pattern.slice(0, 80)}…` : pattern);
  if (pattern.length > MAX_PATTERN_CHARS) throw new PatternRefused(`pattern ${shown} is ${pattern.length} characters long, more than ${MAX_PATTERN_CHARS}`);
  // JSON Schema's patterns are ECMAScript's, and clients compile them so (the MCP SDK's
  // listTools compiles every outputSchema with ajv): RE2-only syntax such as (?i) or \pL would
  // pass here and break a client's whole tool list (an outside tester's find). V8 only parses
  // the pattern here; it compiles one when first run, which this never does.
  try {
    void new RegExp(pattern, 'u');
  } catch (error) {
    throw new PatternRefused(`pattern ${shown} is not an ECMAScript regular expression with the u flag (${(error as Error).message.replace(/^Invalid regular expression: \/.*\/u: /s, '')}), as JSON Schema requires`);
  }
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(alignWithEcmaScript(RE2JS.translateRegExp(pattern)), caseInsensitive ? RE2JS.CASE_INSENSITIVE : 0);
  } catch (error) {
    const reason = (error as Error).message.replace(/^error parsing regexp: /, '');
    throw new PatternRefused(`pattern ${shown} cannot run in linear time (${reason}); lookaround and backreferences are not supported`);
  }
  const size = compiled.programSize();
  if (size > MAX_PATTERN_INSTRUCTIONS) {
    throw new PatternRefused(`pattern ${shown} compiles to ${size} instructions, more than ${MAX_PATTERN_INSTRUCTIONS} (each costs time on every character checked); use fewer or smaller counted repetitions`);
  }
  if (cachedInstructions + size > MAX_CACHED_INSTRUCTIONS) {
    compiledPrograms.clear();
    cachedInstructions = 0;
  }
  compiledPrograms.set(key, compiled);
  cachedInstructions += size;
  return compiled;
}

/**
 * Compiles an ECMAScript pattern for linear-time matching; throws a one-line message when RE2
 * cannot run it, or not cheaply.
 *
 * A plugin's patterns are matched without re2js's lazy DFA (`matcher().find()` runs the
 * one-pass, backtracking or NFA engine): each DFA keeps up to 8 MB of states for as long as
 * its pattern lives, so 800 small patterns grew the host's heap 235 MB a call until it died;
 * and a DFA that gives up rebuilds its states for each string tested (80 ns an instruction a
 * character, where the simulation takes 12). `useDfa` is for the host's own fixed patterns
 * (formats): a few caches, made once.
 */
export function compileLinear(pattern: string, caseInsensitive = false, useDfa = false): RegExpLike {
  const compiled = compileRe2(pattern, caseInsensitive);
  // ajv shares one compiled pattern per toString() key: it must name the pattern.
  const key = `/${pattern}/${caseInsensitive ? 'i' : ''}`;
  const test = useDfa ? (input: string) => compiled.test(input) : (input: string) => compiled.matcher(input).find();
  const linear: RegExpLike & { toString(): string } = { test, toString: () => key };
  return linear;
}

/** The compiled program shared for `pattern`, if one is cached (for tests that look inside re2js). */
export function cachedProgram(pattern: string): RE2JS | undefined {
  return compiledPrograms.get(`-${pattern}`);
}

/** Instructions `pattern` compiles to (at most MAX_PATTERN_INSTRUCTIONS); throws as compileLinear does. */
export function patternInstructions(pattern: string): number {
  return compileRe2(pattern, false).programSize();
}

/**
 * What testing one character against `pattern` may cost, in instructions: each counts one,
 * and a character class more by the ranges it lists (matching one is a binary search over
 * them: `[\p{L}\p{N}\p{M}\p{P}\p{S}]` is one instruction of about 1,500 ranges, and a class of
 * 200,000 took 40-70 ns a character where the model allowed 12). Reads re2js's compiled
 * program; should that change shape, every instruction counts as a large class.
 */
export function patternWeight(pattern: string): number {
  const compiled = compileRe2(pattern, false);
  const instructions = (compiled as unknown as { re2Input?: { prog?: { inst?: unknown } } }).re2Input?.prog?.inst;
  if (!Array.isArray(instructions)) return compiled.programSize() * LARGE_CLASS_WEIGHT;
  let weight = 0;
  for (const instruction of instructions as unknown[]) {
    // runes (an Int32Array): [lo, hi, lo, hi, ...] for a class; one rune for a literal.
    const ranges = ((instruction as { runes?: { length?: unknown } } | null)?.runes?.length ?? 0) as number;
    weight += typeof ranges === 'number' && ranges > 2 ? 1 + Math.ceil(Math.log2(ranges / 2)) : 1;
  }
  return weight;
}

/** A class of about 100,000 ranges: the weight of an instruction when the program cannot be read. */
const LARGE_CLASS_WEIGHT = 18;

/** ajv's `code.regExp`: every `pattern` and `patternProperties` key goes through here. */
export const linearRegExp: RegExpEngine = Object.assign((pattern: string) => compileLinear(pattern), { code: 'airlockLinearRegExp' });
