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
  return JSON.stringify(value, null, indent).replace(RAW_IN_JSON, (character) =>
    Array.from({ length: character.length }, (_, index) => `\\u${character.charCodeAt(index).toString(16).padStart(4, '0')}`).join(''));
}
