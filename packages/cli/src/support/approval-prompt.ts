// What a person reads before saying yes: the tool, the reason, and every argument,
// escaped (no control or bidi character acts on the terminal) and wrapped (nothing runs
// off the edge). A value too long to show is cut in the middle, never silently: the
// prompt says how many characters are hidden and offers "v" to see all of them.
import type { ApprovalRequest, JsonValue } from '@airlock/core';
import { jsonText, visible } from './terminal-text.js';

/** Longest value shown in full; longer ones keep their head and tail (where a path's dangerous end is). */
const MAX_VALUE_CHARS = 2000;
const EDGE_CHARS = 800;
const MAX_ARGUMENTS = 40;

export interface ApprovalPrompt {
  readonly text: string;
  /** Whether part of the arguments is not shown (then "v" shows it all). */
  readonly hidden: boolean;
  readonly tool: string;
}

/** Breaks text into indented lines of at most `width` columns (code points, so no pair is split). */
export function wrap(text: string, width: number, indent = '  ', continuation = '    '): string[] {
  const characters = Array.from(text);
  const lines: string[] = [];
  let start = 0;
  do {
    const prefix = lines.length === 0 ? indent : continuation;
    const room = Math.max(10, width - prefix.length);
    lines.push(`${prefix}${characters.slice(start, start + room).join('')}`);
    start += room;
  } while (start < characters.length);
  return lines;
}

function jsonOf(value: JsonValue): string {
  return visible(jsonText(value, 0));
}

/** Each argument as "key: value", escaped; a value too long is cut in the middle, and what is left out is counted. */
function shownArguments(request: ApprovalRequest): { readonly lines: string[]; readonly notes: string[] } {
  const entries = Object.entries(request.args);
  const lines: string[] = [];
  let hiddenChars = 0;
  for (const [key, value] of entries.slice(0, MAX_ARGUMENTS)) {
    const shown = Array.from(jsonOf(value));
    let text = shown.join('');
    if (shown.length > MAX_VALUE_CHARS) {
      const cut = shown.length - 2 * EDGE_CHARS;
      hiddenChars += cut;
      text = `${shown.slice(0, EDGE_CHARS).join('')} … [${cut} characters hidden] … ${shown.slice(-EDGE_CHARS).join('')}`;
    }
    lines.push(`${visible(key)}: ${text}`);
  }
  const hiddenArguments = Math.max(0, entries.length - MAX_ARGUMENTS);
  const notes: string[] = [];
  if (hiddenChars > 0) notes.push(`${hiddenChars} characters`);
  if (hiddenArguments > 0) notes.push(`${hiddenArguments} more argument${hiddenArguments === 1 ? '' : 's'}`);
  return { lines, notes };
}

export function approvalPrompt(request: ApprovalRequest, width: number): ApprovalPrompt {
  const tool = visible(request.toolName);
  const header = `Approval needed (${visible(request.reason)}).\n`;
  const all = jsonOf(request.args);
  const oneLine = `Allow ${tool}(${all})? [y/N] `;
  if (Array.from(oneLine).length <= width) return { text: `${header}${oneLine}`, hidden: false, tool };

  const { lines, notes } = shownArguments(request);
  const hidden = notes.length > 0;
  const summary = hidden
    ? `Arguments of ${tool} (NOT ALL SHOWN: ${notes.join(' and ')} hidden; answer v to see everything):`
    : `Arguments of ${tool} (all shown):`;
  const question = hidden ? `Allow ${tool}? [y/N/v] ` : `Allow ${tool}? [y/N] `;
  return { text: `${header}${summary}\n${lines.flatMap((line) => wrap(line, width)).join('\n')}\n${question}`, hidden, tool };
}

/**
 * The question an MCP client shows (an elicitation): the same escaping as at the terminal,
 * every argument shown, and a value too long for a dialog cut in the middle with what is
 * hidden said plainly (a client has no "v" to see the rest).
 */
export function elicitationMessage(request: ApprovalRequest): string {
  const tool = visible(request.toolName);
  const reason = `Approval needed: ${visible(request.reason)}.`;
  const all = jsonOf(request.args);
  if (Array.from(all).length <= MAX_VALUE_CHARS) return `Allow ${tool}(${all})? ${reason}`;
  const { lines, notes } = shownArguments(request);
  const summary = notes.length > 0
    ? `NOT ALL SHOWN: ${notes.join(' and ')} hidden. Decline unless you know what the hidden part holds.`
    : 'All arguments shown.';
  return `Allow ${tool}? ${reason}\nArguments (${summary})\n${lines.join('\n')}`;
}

/** Every argument in full, escaped and wrapped: what "v" shows. */
export function fullArguments(request: ApprovalRequest, width: number): string {
  const lines = Object.entries(request.args).flatMap(([key, value]) => wrap(`${visible(key)}: ${jsonOf(value)}`, width));
  return `All arguments of ${visible(request.toolName)}:\n${lines.join('\n')}\n`;
}
