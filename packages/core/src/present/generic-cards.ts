// UI cards for calls and results; a generic card when a tool has none of its own.
import type { JsonObject } from '../json/json-types.js';
import type { RegisteredTool } from '../registry/tool-registry.js';
import type { ToolResult } from '../result/tool-result.js';
import type { Card } from '../tool/tool-definition.js';
import { messageOf } from '../util/sanitize-message.js';

const MAX_FIELD_CHARS = 120;

function short(text: string): string {
  return text.length > MAX_FIELD_CHARS ? `${text.slice(0, MAX_FIELD_CHARS - 1)}…` : text;
}

export function genericCallCard(name: string, args: JsonObject | undefined): Card {
  const fields = Object.entries(args ?? {}).map(([label, value]) => ({ label, value: short(typeof value === 'string' ? value : JSON.stringify(value)) }));
  return { title: name, fields };
}

export function genericResultCard(result: ToolResult): Card {
  return result.isError
    ? { title: `${result.name} failed: ${result.error.code}`, body: short(result.error.message) }
    : { title: `${result.name} succeeded`, body: short(result.content) };
}

/** The tool's own card when it has one and it works; otherwise the generic card. */
export function presentCall(tool: RegisteredTool | undefined, name: string, args: JsonObject | undefined): Card {
  const own = tool?.definition.presentCall;
  if (own !== undefined && args !== undefined) {
    try {
      return own(args);
    } catch (error) {
      return { ...genericCallCard(name, args), body: `presentCall failed: ${messageOf(error)}` };
    }
  }
  return genericCallCard(name, args);
}

export function presentResult(tool: RegisteredTool | undefined, args: JsonObject | undefined, result: ToolResult): Card {
  const own = tool?.definition.presentResult;
  if (own !== undefined && args !== undefined) {
    try {
      return own(args, result);
    } catch {
      return genericResultCard(result);
    }
  }
  return genericResultCard(result);
}
