// Bounds argument size and depth before anything recursive touches them, then parses
// and snapshots once into frozen lossless JSON.
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonValue } from './json-types.js';
import { freezeParsedJson } from './freeze-parsed-json.js';
import { scanJsonText } from './scan-json-text.js';
import { snapshotJson } from './snapshot-json.js';

/** `jsonLength`: the arguments' JSON text length, which sizes their validation budget. */
export type ArgumentsOutcome = { readonly ok: true; readonly value: JsonValue; readonly jsonLength: number } | { readonly ok: false; readonly message: string };

/** Deepest bracket nesting of JSON text, ignoring brackets inside strings; linear, no recursion. */
export function jsonTextDepth(text: string): number {
  return scanJsonText(text).depth;
}

/**
 * The first integer literal outside strings in JSON text that JSON.parse would round (past
 * 2^53), and what it would become; undefined when there is none. For text whose numbers reach
 * a tool as parsed values (an Anthropic or Gemini transcript's inputs), where the argument
 * check (which reads argument text) would see only the rounded number.
 */
export function firstRoundedInteger(text: string): { readonly literal: string; readonly becomes: number } | undefined {
  for (const [becomes, literal] of scanJsonText(text).rounded) return { literal, becomes };
  return undefined;
}

/**
 * Every integer literal outside strings in JSON text that JSON.parse would round, by what it
 * becomes: to find whether a part of the parsed value (one call's decoded arguments) holds one,
 * when another part (an earlier turn of the same transcript) may hold others harmlessly.
 */
export function roundedIntegers(text: string): ReadonlyMap<number, string> {
  return scanJsonText(text).rounded;
}

export function parseJsonArguments(raw: unknown, limits: { maxArgumentBytes: number; maxArgumentDepth: number }): ArgumentsOutcome {
  if (raw === undefined || raw === '') return { ok: true, value: {}, jsonLength: 2 }; // no arguments at all means "{}"
  if (typeof raw === 'string') {
    // UTF-16 length bounds UTF-8 bytes from below, so this cheap check runs first.
    if (raw.length > limits.maxArgumentBytes || Buffer.byteLength(raw, 'utf8') > limits.maxArgumentBytes) {
      return { ok: false, message: `arguments are larger than ${limits.maxArgumentBytes} bytes` };
    }
    const { depth, rounded } = scanJsonText(raw);
    if (depth > limits.maxArgumentDepth) return { ok: false, message: `arguments are nested deeper than ${limits.maxArgumentDepth} levels` };
    let parsed: unknown;
    try {
      parsed = JSON.parse(raw);
    } catch (error) {
      // Only a SyntaxError means the text is not JSON. V8 reports where only in its message
      // (no position property), so that text is quoted whole, never parsed or rewritten.
      if (!(error instanceof SyntaxError)) throw error;
      return { ok: false, message: `arguments are not valid JSON (${error.message}); send a JSON object` };
    }
    // JSON.parse output is plain and acyclic, and its depth was bounded above; its numbers may
    // not be finite, or may be integers it rounded.
    const bad = freezeParsedJson(parsed as JsonValue, rounded);
    if (bad !== undefined) {
      if ('prototypeKey' in bad) return prototypeKeyRefusal(bad.path);
      const literal = rounded.get(bad.value);
      if (literal !== undefined) return { ok: false, message: `${bad.path} is ${literal}, an integer a JSON number cannot hold exactly (it would arrive as ${String(bad.value)}); send it as a string` };
      return { ok: false, message: `${bad.path} is a number too large to represent (JSON numbers must be finite)` };
    }
    return { ok: true, value: parsed as JsonValue, jsonLength: raw.length };
  }
  try {
    const value = snapshotJson(raw, { label: 'arguments', maxDepth: limits.maxArgumentDepth });
    const bad = freezeParsedJson(value);
    if (bad !== undefined && 'prototypeKey' in bad) return prototypeKeyRefusal(bad.path);
    const text = JSON.stringify(value);
    if (Buffer.byteLength(text, 'utf8') > limits.maxArgumentBytes) return { ok: false, message: `arguments are larger than ${limits.maxArgumentBytes} bytes` };
    return { ok: true, value, jsonLength: text.length };
  } catch (error) {
    if (!AirlockError.isInstance(error)) throw error;
    // Too deep reads as it does for JSON text; any other refusal keeps snapshotJson's own words.
    const { maxDepth, path } = error.details;
    if (typeof maxDepth === 'number') return { ok: false, message: `arguments are nested deeper than ${maxDepth} levels (at ${String(path)})` };
    return { ok: false, message: error.message };
  }
}

/** No tool can declare a "__proto__" property (the validator refuses one), so no call needs to send it. */
function prototypeKeyRefusal(path: string): ArgumentsOutcome {
  return { ok: false, message: `${path === '(the root)' ? 'the arguments hold' : `${path} holds`} a key named "__proto__", which no tool takes (a tool copying its arguments would take it as their prototype); leave it out` };
}
