// Human output: each call as a card with its outcome, duration and error code.
// Every piece of text that did not come from this file (names, ids, arguments, messages,
// card text) is escaped before it is styled, so nothing it holds can move the cursor,
// rewrite a line, retitle the window or forge a summary.
import type { Card, Engine, JsonObject, ToolResult } from '@airlock/core';
import { logName } from './log-name.js';
import type { Style } from './style.js';
import { visible } from './terminal-text.js';

const MAX_BODY = 400;

export interface CallView {
  readonly name: string;
  readonly args: JsonObject | undefined;
  readonly result: ToolResult;
}

function clip(text: string): string {
  const shown = visible(text);
  return shown.length > MAX_BODY ? `${shown.slice(0, MAX_BODY - 1)}…` : shown;
}

function timing(result: ToolResult): string {
  // Answers from the command line take no time; a person's wait is worth showing.
  const approval = result.approvalMs === undefined || result.approvalMs < 1 ? '' : ` · ${(result.approvalMs / 1000).toFixed(1)} s waiting for approval`;
  return `${result.durationMs.toFixed(1)} ms${approval} · ${visible(logName(result.callId))}`;
}

export function renderCards(engine: Engine, calls: readonly CallView[], style: (style: Style, text: string) => string): string {
  const lines: string[] = [];
  for (const { name, args, result } of calls) {
    const callCard: Card = engine.presentCall(name, args);
    const resultCard: Card = engine.presentResult(args, result);
    const outcome = result.isError ? style('red', `✗ ${visible(result.error.code)}`) : style('green', '✓ ok');
    lines.push(`${style('bold', clip(callCard.title))}  ${outcome}  ${style('dim', timing(result))}`);
    for (const field of callCard.fields ?? []) lines.push(`  ${style('dim', `${clip(field.label)}:`)} ${clip(field.value)}`);
    if (callCard.body !== undefined) lines.push(`  ${clip(callCard.body)}`);
    lines.push(`  ${style(result.isError ? 'red' : 'cyan', '→')} ${clip(resultCard.body ?? result.content)}`);
    lines.push('');
  }
  const failed = calls.filter(({ result }) => result.isError).length;
  lines.push(style('dim', `${calls.length} call${calls.length === 1 ? '' : 's'}: ${calls.length - failed} succeeded, ${failed} failed`));
  return `${lines.join('\n')}\n`;
}
