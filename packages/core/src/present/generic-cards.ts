// UI cards for calls and results; a generic card when a tool has none of its own.
// Every string of every card, the tool's own included, leaves here with its control,
// bidi and other invisible characters escaped: names, arguments, error messages and
// card text come from the model or a plugin and would otherwise drive the terminal.
import type { JsonObject, JsonValue } from '../json/json-types.js';
import type { RegisteredTool } from '../registry/tool-registry.js';
import type { ToolResult } from '../result/tool-result.js';
import { containRejection } from '../util/contain-rejection.js';
import type { Card } from '../tool/tool-definition.js';
import { messageOf } from '../util/sanitize-message.js';
import { escapeControls, escapeControlsInJson, findControlCharacter } from '../util/visible-text.js';

const MAX_FIELD_CHARS = 120;
// A failure's reason is what a person needs to read in full: longer than a field.
const MAX_ERROR_CHARS = 400;
const MAX_FIELDS = 50;

function short(text: string, max = MAX_FIELD_CHARS): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A card whose every string is escaped; anything that is not a well-formed card becomes text saying so. */
export function visibleCard(card: unknown): Card {
  try {
    if (typeof card !== 'object' || card === null) return { title: 'invalid card' };
    const { title, body, fields } = card as { title?: unknown; body?: unknown; fields?: unknown };
    const visible: { title: string; body?: string; fields?: { label: string; value: string }[] } = { title: escapeControls(typeof title === 'string' ? title : String(title)) };
    if (body !== undefined) visible.body = escapeControls(typeof body === 'string' ? body : String(body));
    if (Array.isArray(fields)) {
      visible.fields = fields.slice(0, MAX_FIELDS).map((field: unknown) => {
        const { label, value } = (typeof field === 'object' && field !== null ? field : {}) as { label?: unknown; value?: unknown };
        return { label: escapeControls(String(label)), value: escapeControls(typeof value === 'string' ? value : String(value)) };
      });
    }
    return visible;
  } catch (error) {
    return { title: 'invalid card', body: escapeControls(`the card could not be read (${messageOf(error)})`) };
  }
}

/**
 * An argument as a person reads it: a plain string as itself; any other value, and a string
 * that holds a backslash or a character shown as an escape (or starts with a quote), as JSON. Escaped in place, a real
 * line break and the two characters `\n` would both read `\n`; as JSON they read `"a\nb"` and
 * `"a\\nb"`, what the tool receives.
 */
function argumentText(value: JsonValue): string {
  if (typeof value === 'string' && !value.includes('\\') && !value.startsWith('"') && findControlCharacter(value) === undefined) return value;
  try {
    // Characters JSON.stringify leaves raw (C1 controls, bidi, separators) as JSON escapes too: still the same JSON.
    return escapeControlsInJson(String(JSON.stringify(value)));
  } catch {
    // Cards show arguments as the model sent them, checked or not: nested thousands deep,
    // JSON.stringify overflows the stack, and the whole turn's output went with it.
    return '(cannot be shown: nested too deep)';
  }
}

export function genericCallCard(name: string, args: JsonObject | undefined): Card {
  const fields = Object.entries(args ?? {}).map(([label, value]) => ({ label, value: short(argumentText(value)) }));
  return visibleCard({ title: name, fields });
}

export function genericResultCard(result: ToolResult): Card {
  return visibleCard(result.isError
    ? { title: `${result.name} failed: ${result.error.code}`, body: short(result.error.message, MAX_ERROR_CHARS) }
    : { title: `${result.name} succeeded`, body: short(result.content) });
}

/** The tool's own card when it has one and it works; otherwise the generic card. */
export function presentCall(tool: RegisteredTool | undefined, name: string, args: JsonObject | undefined): Card {
  const own = tool?.definition.presentCall;
  if (own !== undefined && args !== undefined) {
    try {
      const card = own(args);
      // An async presentCall answers a promise, which is no card.
      if (containRejection(card)) return genericCallCard(name, args);
      return visibleCard(card);
    } catch (error) {
      return visibleCard({ ...genericCallCard(name, args), body: `presentCall failed: ${messageOf(error)}` });
    }
  }
  return genericCallCard(name, args);
}

export function presentResult(tool: RegisteredTool | undefined, args: JsonObject | undefined, result: ToolResult): Card {
  const own = tool?.definition.presentResult;
  if (own !== undefined && args !== undefined) {
    try {
      const card = own(args, result);
      if (containRejection(card)) return genericResultCard(result);
      return visibleCard(card);
    } catch {
      return genericResultCard(result);
    }
  }
  return genericResultCard(result);
}
