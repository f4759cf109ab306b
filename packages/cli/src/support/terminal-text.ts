// Everything the CLI prints comes from somewhere it does not trust: tool names and
// arguments from the model, messages and cards from plugins, file names from the disk.
// Text goes through core's escapeControls (one function: controls, bidi and invisible
// characters become visible escapes such as \x1b or \u202e). JSON goes through jsonText,
// which writes the same characters as JSON \u escapes, so the data is unchanged.
import { escapeControls } from '@airlock/core';

export { escapeControls as visible };

// JSON.stringify escapes C0 controls already; these it leaves raw (DEL, C1, format and separator characters).
const RAW_IN_JSON = /[\u007f-\u009f\p{Cf}\p{Default_Ignorable_Code_Point}\u2028\u2029]/gu;

/** JSON text that parses to the same value and shows no control, bidi or invisible character raw. */
export function jsonText(value: unknown, indent = 2): string {
  return escapeRawInJson(JSON.stringify(value, null, indent));
}

/**
 * JSON text (JSON.stringify's) with the characters it leaves raw written as \u escapes: they
 * can stand only inside its strings, where the escape means the same character.
 */
export function escapeRawInJson(json: string): string {
  return json.replace(RAW_IN_JSON, (character) =>
    Array.from({ length: character.length }, (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`).join(''));
}

// Characters a terminal draws two columns wide: East Asian wide and fullwidth forms, and emoji.
const WIDE = /[\u1100-\u115F\u2E80-\u303E\u3041-\u33FF\u3400-\u4DBF\u4E00-\u9FFF\uA000-\uA4CF\uAC00-\uD7A3\uF900-\uFAFF\uFE30-\uFE4F\uFF00-\uFF60\uFFE0-\uFFE6\u{1F300}-\u{1F64F}\u{1F900}-\u{1F9FF}\u{20000}-\u{3FFFD}]/u;

/**
 * Visible text cut to at most `columns` terminal columns (an ellipsis marks the cut). Counted
 * in columns, not UTF-16 units: a line of wide characters counted short wraps, and a redraw
 * that moves up by its line count leaves the wrapped part on the screen.
 */
export function fitColumns(text: string, columns: number): string {
  const shown = escapeControls(text);
  let used = 0;
  let end = 0;
  const characters = Array.from(shown);
  for (const [index, character] of characters.entries()) {
    const width = WIDE.test(character) ? 2 : 1;
    if (used + width > columns - (index < characters.length - 1 ? 1 : 0)) return `${characters.slice(0, end).join('')}…`;
    used += width;
    end = index + 1;
  }
  return shown;
}
