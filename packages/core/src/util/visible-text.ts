// Characters that do not show as themselves: C0 and C1 controls and DEL (Cc: ESC, CSI
// U+009B, NEL U+0085, NUL...), format characters (Cf: bidi overrides and isolates,
// zero-width characters, Unicode tag characters that smuggle invisible text), line and
// paragraph separators (Zl, Zp), the other characters Unicode says to render as nothing
// (Default_Ignorable_Code_Point: variation selectors, U+034F, Hangul fillers) and lone
// surrogates; and two that show as blank or as a box in place of something (U+2800 Braille
// blank, U+FFFC object replacement). A terminal acts on them or hides them, so what a person reads would differ
// from what runs; a path rule cannot match them reliably either. One definition for both uses.
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Default_Ignorable_Code_Point}\u2800\ufffc]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/gu;
const INVISIBLE_ONE = new RegExp(INVISIBLE.source, 'u');
const NAMED: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

function hex(codePoint: number, width: number): string {
  return codePoint.toString(16).padStart(width, '0');
}

/** `\x1b`, `\u202e`, `\u{e0041}`: a visible escape for one invisible character. */
export function escapeCharacter(character: string): string {
  const named = NAMED[character];
  if (named !== undefined) return named;
  const codePoint = character.codePointAt(0) as number;
  if (codePoint <= 0xff) return `\\x${hex(codePoint, 2)}`;
  if (codePoint <= 0xffff) return `\\u${hex(codePoint, 4)}`;
  return `\\u{${hex(codePoint, 5)}}`;
}

/**
 * Text safe to print on a terminal: every control, format (bidi, zero-width, tag)
 * character, line separator and lone surrogate becomes a visible escape. Idempotent,
 * and nothing else changes, so what a person reads is what the text says.
 */
export function escapeControls(text: string): string {
  return String(text).replace(INVISIBLE, escapeCharacter);
}

/** The first invisible character of a text and where it is, or undefined when there is none. */
export function findControlCharacter(text: string): { readonly escaped: string; readonly index: number } | undefined {
  const found = INVISIBLE_ONE.exec(text);
  return found === null ? undefined : { escaped: escapeCharacter(found[0]), index: found.index };
}

/**
 * JSON text in which every invisible character (as escapeControls sees them) is a `\uXXXX`
 * escape, so it is still the same JSON. JSON.stringify escapes only C0 controls and lone
 * surrogates; DEL, C1 controls, bidi and zero-width characters and line separators stay raw.
 */
export function escapeControlsInJson(json: string): string {
  return json.replace(INVISIBLE, (character) => {
    let escaped = '';
    for (let i = 0; i < character.length; i += 1) escaped += `\\u${hex(character.charCodeAt(i), 4)}`;
    return escaped;
  });
}
