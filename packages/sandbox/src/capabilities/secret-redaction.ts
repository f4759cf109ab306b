// What a fetch answer may carry back of the secrets its request sent, replaced by [REDACTED]
// wherever the origin echoes them: in header names, header values and the body. Servers
// escape what they echo each in their own way, and escape some characters and not others
// (Go's JSON writes & < > as \u0026 \u003c \u003e, .NET's writes + as \u002B, an error page
// writes &amp;), so a value is matched character by character, each character in any of the
// spellings below, in any mix; base64 is matched as whole runs.

/** One value the request sent, and the header it went in as sent ("Bearer <value>"). */
export interface SentSecret {
  readonly value: string;
  readonly header: string;
}

const REDACTED = '[REDACTED]';

/** HTML's named entities for the characters that have one in common use. */
const NAMED_ENTITIES: Readonly<Record<string, readonly string[]>> = {
  '&': ['amp'],
  '<': ['lt'],
  '>': ['gt'],
  '"': ['quot'],
  "'": ['apos'],
};

/**
 * Short escapes: JSON's (JSON.stringify's, and "\/" as PHP writes it), "+" for a space (forms),
 * and a space for "+" (a form decoder's reading of one: PHP's and Rack's cookies).
 */
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '"': '\\"', '\\': '\\\\', '/': '\\/', '\t': '\\t', ' ': '+', '+': ' ' };

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** A letter in either case, as a character class (the body is matched case-sensitively). */
const eitherCase = (text: string): string => text.replace(/[a-z]/gi, (letter) => `[${letter.toLowerCase()}${letter.toUpperCase()}]`);

/**
 * Every spelling of one character an echo may use: itself, a JSON escape (short or \uXXXX),
 * percent-encoding, an HTML entity (decimal, hex or named). Hex digits in either case. A space
 * also as "+" (form encoding), and "+" as a space (form decoding).
 */
function characterSpellings(character: string): string {
  const code = character.charCodeAt(0);
  const hex2 = code.toString(16).padStart(2, '0');
  const spellings = [
    escapeRegExp(character),
    `\\\\u${eitherCase(code.toString(16).padStart(4, '0'))}`,
    `%${eitherCase(hex2)}`,
    `&#0*${code};`,
    `&#[xX]0*${eitherCase(code.toString(16))};`,
    ...(NAMED_ENTITIES[character] ?? []).map((name) => `&${eitherCase(name)};`),
    ...(Object.hasOwn(SHORT_ESCAPES, character) ? [escapeRegExp(SHORT_ESCAPES[character] as string)] : []),
  ];
  return `(?:${spellings.join('|')})`;
}

/** The value's base64 as a whole, and the part of it fixed whatever bytes precede it (offset 0, 1 or 2 in its group of three). */
function base64Spellings(value: string): string[] {
  const bytes = Buffer.from(value, 'utf8');
  const spellings = [bytes.toString('base64')];
  for (let offset = 0; offset < 3; offset += 1) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Drop the group the preceding bytes share, and the last group, which the following bytes share.
    const stable = encoded.slice(offset === 0 ? 0 : 4, Math.floor((offset + bytes.length) / 3) * 4);
    // Too short a run would redact by coincidence; the whole value's spelling still stands.
    if (stable.length >= 8) spellings.push(stable);
  }
  return spellings;
}

/**
 * Replaces every spelling of the sent values: each value character by character (above), and
 * base64 and base64url of the value and of the header as sent, at each of the three alignments
 * a value can take inside a longer encoded text. Base64 runs first, longest first, so none is
 * half-replaced. `flags` 'i' for header names, which arrive in lower case.
 */
export function secretScrubber(sent: readonly SentSecret[], flags: '' | 'i'): (text: string) => string {
  const encoded = new Set<string>();
  const spelled = new Set<string>();
  for (const { value, header } of sent) {
    if (value.length === 0) continue;
    spelled.add([...value].map(characterSpellings).join(''));
    for (const run of [...base64Spellings(value), ...base64Spellings(header)]) encoded.add(run).add(run.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  if (spelled.size === 0) return (text) => text;
  const alternatives = [...[...encoded].sort((x, y) => y.length - x.length).map(escapeRegExp), ...spelled];
  const pattern = new RegExp(alternatives.join('|'), `g${flags}`);
  return (text) => text.replace(pattern, REDACTED);
}
