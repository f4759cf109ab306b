// One `when` condition of a policy rule: globs on a path-like argument. The value is
// checked before it is matched: control characters are refused (a glob cannot match
// them reliably, a person cannot see them), `.` and `..` are resolved, and a value that
// climbs out of its root (or above its starting folder) is refused.
import picomatch from 'picomatch';
import { RE2JS } from 're2js';
import { posix } from 'node:path';
import { AirlockError } from '../errors/airlock-error.js';
import { findControlCharacter } from '../util/visible-text.js';
import { listCopy } from '../util/plain-options.js';

/** Globs on an argument's value: the short form, or `{ matches, root }` to resolve relative paths. */
export type ArgumentCondition =
  | string
  | readonly string[]
  | {
      /** Glob or globs the resolved path must match. Relative globs are relative to `root`. */
      readonly matches: string | readonly string[];
      /** Absolute folder the tool resolves relative paths against; a value may not climb out of it. */
      readonly root?: string | undefined;
    };

/** What a condition makes of one value: it holds, it does not, or the value is refused outright. */
export type ConditionOutcome = { readonly holds: boolean } | { readonly refused: string };

export interface CompiledCondition {
  readonly argument: string;
  evaluate(value: string): ConditionOutcome;
}

function globsOf(condition: unknown): readonly unknown[] {
  if (typeof condition === 'string') return [condition];
  if (Array.isArray(condition)) return listCopy(condition);
  if (typeof condition !== 'object' || condition === null) return [];
  const matches = (condition as { matches?: unknown }).matches;
  return typeof matches === 'string' ? [matches] : Array.isArray(matches) ? listCopy(matches) : [];
}


function invalid(path: string, message: string): AirlockError {
  return new AirlockError('INVALID_OPTION', `${path} ${message}`, { path });
}

/**
 * What picomatch writes into its regular expressions to keep `*` and `**` off `.` and `..`
 * segments and off empty ones: lookarounds, which RE2 cannot run. A value reaches a matcher
 * normalized (no such segment, no trailing slash), so without them the match is the same.
 */
const SEGMENT_GUARDS = ['(?!\\.{1,2}(?:\\/|$))', '(?!(?:^|\\/)\\.{1,2}(?:\\/|$))', '(?=.)'];

/** One glob: picomatch's syntax and meaning, matched by RE2 in time linear in the value. */
function linearGlob(glob: string): (value: string) => boolean {
  // A leading "!" negates (each one flips), as in picomatch; "!(" is an extglob.
  let negated = false;
  let body = glob;
  while (body.startsWith('!') && !body.startsWith('!(')) {
    negated = !negated;
    body = body.slice(1);
  }
  // dot: "*" matches names that start with a dot too; dotAll: "*" and "**" do not stop at a
  // line terminator ("/etc/x\n" must not escape "/etc/**").
  let source = picomatch.makeRe(body, { dot: true, flags: 's' }).source;
  for (const guard of SEGMENT_GUARDS) source = source.split(guard).join('');
  let compiled: RE2JS;
  try {
    compiled = RE2JS.compile(RE2JS.translateRegExp(source), RE2JS.DOTALL);
  } catch {
    throw new AirlockError('INVALID_OPTION', `the glob ${JSON.stringify(glob)} needs lookaround (a negated extglob such as "!(...)"), which cannot be matched in time linear in the value; write it without`, { glob });
  }
  // Without its "(?=.)" a star may match nothing at the very end: only "/" (the one normalized
  // value with an empty last segment) could tell, and picomatch answers it at no cost.
  const root = picomatch(body, { dot: true, flags: 's' })('/') === true;
  // picomatch also takes a value equal to the glob's own text as a match.
  const matches = (value: string): boolean => value === body || (value === '/' ? root : compiled.test(value));
  return negated ? (value) => !matches(value) : matches;
}

/**
 * Whether a value matches any of the globs. The value is a model's argument and the match runs
 * on the host's event loop: picomatch's own backtracking expressions took seconds on a few
 * kilobytes against "**\/*-*-*-*.log", so the same expressions run on RE2 instead.
 */
export function globMatcher(globs: readonly string[]): (value: string) => boolean {
  if (globs.length === 0) return () => false;
  const matchers = globs.map(linearGlob);
  return (value) => matchers.some((matches) => matches(value));
}

export function compileCondition(argument: string, condition: ArgumentCondition, at: string): CompiledCondition {
  const long = typeof condition === 'object' && condition !== null && !Array.isArray(condition);
  if (long) {
    for (const key of Object.keys(condition)) if (key !== 'matches' && key !== 'root') throw invalid(`${at}.${key}`, 'is not a condition key (use "matches" and "root")');
  }
  const listed = globsOf(condition);
  const globsAt = long ? `${at}.matches` : at;
  if (listed.length === 0 || listed.some((glob) => typeof glob !== 'string' || glob === '')) throw invalid(globsAt, 'must be a non-empty glob or list of globs');
  const globs = listed as readonly string[];
  for (const glob of globs) if (findControlCharacter(glob) !== undefined) throw invalid(globsAt, 'must not contain control characters');
  const root = long ? (condition as { root?: unknown }).root : undefined;
  if (root !== undefined && (typeof root !== 'string' || !root.startsWith('/') || posix.normalize(root) !== root.replace(/(.)\/+$/, '$1') || findControlCharacter(root) !== undefined || GLOB_SYNTAX.test(root))) {
    throw invalid(`${at}.root`, 'must be an absolute, normalized path (no "." or ".." segments, no glob characters)');
  }
  const rootDir = root === undefined ? undefined : posix.normalize(root).replace(/(.)\/+$/, '$1');
  // With a root, relative globs are anchored at it, so every glob meets one absolute path.
  const matches = globMatcher(rootDir === undefined ? globs : globs.map((glob) => anchor(glob, rootDir)));

  return {
    argument,
    evaluate(value) {
      const control = findControlCharacter(value);
      if (control !== undefined) {
        return { refused: `argument "${argument}" contains a control character (${control.escaped} at ${control.index}), which a path rule cannot match reliably` };
      }
      if (rootDir === undefined) {
        // Without a trailing slash: "/srv/data/" names the folder "/srv/data" does (a root's resolve drops it too).
        const normalized = posix.normalize(value).replace(/(.)\/+$/, '$1');
        // No root to resolve against: a relative path is judged only while it stays below where it starts.
        if (normalized === '..' || normalized.startsWith('../')) return { refused: `argument "${argument}" (${shown(value)}) climbs above its starting folder, and the rule names no root to resolve it against` };
        return { holds: matches(normalized) };
      }
      const resolved = posix.resolve(rootDir, value);
      // An absolute value names its own place; only a relative one can climb out of the root.
      if (!value.startsWith('/') && !isInside(posix.relative(rootDir, resolved))) {
        return { refused: `argument "${argument}" (${shown(value)}) climbs out of its root ${rootDir}` };
      }
      return { holds: matches(resolved) };
    },
  };
}

const GLOB_SYNTAX = /[*?[\]{}()!+@\\]/;

function anchor(glob: string, rootDir: string): string {
  const negated = glob.startsWith('!');
  const body = negated ? glob.slice(1) : glob;
  const anchored = body.startsWith('/') ? body : `${rootDir === '/' ? '' : rootDir}/${body}`;
  return negated ? `!${anchored}` : anchored;
}

function shown(value: string): string {
  return JSON.stringify(value.length > 200 ? `${value.slice(0, 200)}…` : value);
}

function isInside(relativePath: string): boolean {
  return relativePath !== '..' && !relativePath.startsWith('../') && !posix.isAbsolute(relativePath);
}
