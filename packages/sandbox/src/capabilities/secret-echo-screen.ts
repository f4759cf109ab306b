// The last check on a fetch answer, after its redaction (secret-redaction.ts): does it still
// hold a secret it was sent, in a form no list of spellings covers? Servers nest encodings
// (JSON inside a JSON string, so "\u002B" becomes "\\u002B"), wrap base64 every 60 or 76
// characters, answer in UTF-16, or in quoted-printable: an outside attacker had each of these
// hand the plugin a whole secret. So the answer is decoded every way that could hide a value,
// again and again, and if a secret comes out anywhere the answer is refused whole.

/** Secrets shorter than this are redacted only: decoded text would hold them by chance. */
export const MIN_SCREENED_LENGTH = 8;
/** Rounds of unescaping (each undoes one layer of every escape below). */
const UNESCAPE_ROUNDS = 4;
/** Base64 inside base64 at most this deep. */
const BASE64_DEPTH = 2;
/** Base64-looking runs worth decoding: a screened value (8 characters or more) encodes to 11 or more, padding aside. */
const BASE64_RUN = /[A-Za-z0-9+/_-]{11,}={0,2}/g;

/** HTML's named references for the ASCII characters a value may hold (HTML5 names included). */
const NAMED: Readonly<Record<string, string>> = {
  amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", plus: '+', sol: '/', equals: '=', num: '#',
  dollar: '$', percnt: '%', lpar: '(', rpar: ')', ast: '*', midast: '*', comma: ',', period: '.',
  colon: ':', semi: ';', quest: '?', commat: '@', lsqb: '[', lbrack: '[', bsol: '\\', rsqb: ']',
  rbrack: ']', hat: '^', lowbar: '_', grave: '`', lcub: '{', lbrace: '{', verbar: '|', vert: '|',
  rcub: '}', rbrace: '}', excl: '!', tab: '\t', newline: '\n', nbsp: ' ', hyphen: '-', dash: '-',
  shy: '\u00ad',
};

const SHORT: Readonly<Record<string, string>> = { n: '\n', r: '\r', t: '\t', b: '\b', f: '\f', v: '\v', '0': '\0' };

const fromCode = (code: number): string => (code >= 0 && code <= 0x10ffff ? String.fromCodePoint(code) : '');

/** One layer of every escape an echo may use, undone: JSON and JavaScript, CSS, percent, HTML. */
function unescapeOnce(text: string): string {
  return text
    .replace(/\\u\{([0-9a-f]{1,6})\}|\\u([0-9a-f]{4})|\\x([0-9a-f]{2})|\\([0-9a-f]{1,6}) ?|\\(.)/gis, (_, braced: string | undefined, u: string | undefined, x: string | undefined, css: string | undefined, other: string | undefined) => {
      const hex = braced ?? u ?? x ?? css;
      if (hex !== undefined) return fromCode(Number.parseInt(hex, 16));
      return Object.hasOwn(SHORT, other as string) ? (SHORT[other as string] as string) : (other as string);
    })
    .replace(/%([0-9a-f]{2})/gi, (_, hex: string) => fromCode(Number.parseInt(hex, 16)))
    .replace(/&#x([0-9a-f]{1,8});?|&#([0-9]{1,9});?|&([a-z]{2,8});?/gi, (whole, hex: string | undefined, decimal: string | undefined, name: string | undefined) => {
      if (hex !== undefined) return fromCode(Number.parseInt(hex, 16));
      if (decimal !== undefined) return fromCode(Number.parseInt(decimal, 10));
      const key = (name as string).toLowerCase();
      return Object.hasOwn(NAMED, key) ? (NAMED[key] as string) : whole;
    });
}

/** Quoted-printable undone (MIME): soft line breaks and =HH. Kept apart, first: "=ab" in a decoded query would eat a value's letters. */
function unquotePrintable(text: string): string {
  return text.replace(/=\r?\n/g, '').replace(/=([0-9a-f]{2})/gi, (_, hex: string) => fromCode(Number.parseInt(hex, 16)));
}

/** Every text `text` may stand for, one layer of escapes fewer each, until none is left; and the same from its quoted-printable reading. */
function unescaped(text: string): string[] {
  const views: string[] = [];
  for (const start of new Set([text, unquotePrintable(text)])) {
    views.push(start);
    let current = start;
    for (let round = 0; round < UNESCAPE_ROUNDS; round += 1) {
      const next = unescapeOnce(current);
      if (next === current) break;
      views.push(next);
      current = next;
    }
  }
  return views;
}

/** A secret as the screen looks for it: in lower case, without whitespace, and its longest run of letters and digits. */
interface Wanted {
  readonly packed: string;
  /** No encoder above escapes letters or digits, so an echo holds this run as is (undefined: shorter than 4). */
  readonly fragment: string | undefined;
}

// eslint-disable-next-line no-control-regex -- NUL is what a UTF-16 text read as UTF-8 is spread with
const WHITESPACE_OR_NUL = /[\s\u0000]+/g;
/**
 * What carries no character of a word it breaks, taken out before anything is compared:
 * quoted-printable's soft line break and a backslash line continuation (an outside attacker
 * had Python's email package wrap an echo inside a key, which hid its letters from the
 * prefilter), short markup around part of a word (<mark>, <span class="...">, <wbr>), and
 * what a renderer puts inside a long word to let it wrap: soft hyphens (as entities too) and
 * zero-width characters.
 */
const NO_CHARACTER = /[=\\]\r?\n|<\/?[a-z][a-z0-9]*(?:\s[^<>]{0,120})?\/?>|[\u00ad\u200b-\u200d\u2060\ufeff]|&shy;|&#0*173;|&#x0*ad;/gi;

/** The text read without case, whitespace, NULs (UTF-16 read as UTF-8) or what carries no character. */
const packedOf = (text: string): string => text.toLowerCase().replace(NO_CHARACTER, '').replace(WHITESPACE_OR_NUL, '');

function wantedOf(value: string): Wanted {
  const packed = packedOf(value);
  const fragment = (packed.match(/[a-z0-9]+/g) ?? []).reduce((longest, run) => (run.length > longest.length ? run : longest), '');
  return { packed, fragment: fragment.length >= 4 ? fragment : undefined };
}

/** Whether `packed` could hold one of the secrets once unescaped: it holds its letters and digits already. */
function mayHold(packed: string, wanted: readonly Wanted[]): boolean {
  return wanted.some((secret) => secret.fragment === undefined || packed.includes(secret.fragment));
}

function screened(text: string, wanted: readonly Wanted[], depth: number): boolean {
  const packed = packedOf(text);
  // Unescaping is the costly part, and pointless unless the letters and digits are there.
  if (mayHold(packed, wanted)) {
    for (const view of unescaped(text)) {
      const viewPacked = view === text ? packed : packedOf(view);
      if (wanted.some((secret) => viewPacked.includes(secret.packed))) return true;
    }
  }
  if (depth >= BASE64_DEPTH) return false;
  // Base64 (or base64url), with the line breaks MIME and Ruby put in it taken out, decoded at
  // each of the four offsets a run can start at, and screened again (unescaped only if the
  // letters and digits of a secret are in it: random bytes seldom hold a long run to decode).
  for (const [run] of text.replace(WHITESPACE_OR_NUL, '').matchAll(BASE64_RUN)) {
    for (let offset = 0; offset < 4; offset += 1) {
      if (screened(Buffer.from(run.slice(offset), 'base64').toString('latin1'), wanted, depth + 1)) return true;
    }
  }
  return false;
}

/** Whether any of `texts` (an answer's header names, values and body, redacted) still holds one of `values`, however encoded. */
export function echoesSecret(texts: readonly string[], values: readonly string[]): boolean {
  // A "+" also as a form decoder reads it, a space, which the packed text then drops.
  const wanted = values.filter((value) => value.length >= MIN_SCREENED_LENGTH).flatMap((value) => (value.includes('+') ? [wantedOf(value), wantedOf(value.replace(/\+/g, ' '))] : [wantedOf(value)]));
  if (wanted.length === 0) return false;
  return texts.some((text) => screened(text, wanted, 0));
}
