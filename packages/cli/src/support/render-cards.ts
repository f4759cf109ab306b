// Human output: each call as a card with its outcome, duration and error code.
import type { Card, Engine, JsonObject, ToolResult } from '@airlock/core';
import type { Style } from './style.js';

const MAX_BODY = 400;

export interface CallView {
  readonly name: string;
  readonly args: JsonObject | undefined;
  readonly result: ToolResult;
}

function clip(text: string): string {
  const oneLine = text.replace(/\s*\n\s*/g, ' ⏎ ');
  return oneLine.length > MAX_BODY ? `${oneLine.slice(0, MAX_BODY - 1)}…` : oneLine;
}

export function renderCards(engine: Engine, calls: readonly CallView[], style: (style: Style, text: string) => string): string {
  const lines: string[] = [];
  for (const { name, args, result } of calls) {
    const callCard: Card = engine.presentCall(name, args);
    const resultCard: Card = engine.presentResult(args, result);
    const outcome = result.isError ? style('red', `✗ ${result.error.code}`) : style('green', '✓ ok');
    lines.push(`${style('bold', callCard.title)}  ${outcome}  ${style('dim', `${result.durationMs.toFixed(1)} ms · ${result.callId}`)}`);
    for (const field of callCard.fields ?? []) lines.push(`  ${style('dim', `${field.label}:`)} ${clip(field.value)}`);
    if (callCard.body !== undefined) lines.push(`  ${clip(callCard.body)}`);
    lines.push(`  ${style(result.isError ? 'red' : 'cyan', '→')} ${clip(resultCard.body ?? result.content)}`);
    lines.push('');
  }
  const failed = calls.filter(({ result }) => result.isError).length;
  lines.push(style('dim', `${calls.length} call${calls.length === 1 ? '' : 's'}: ${calls.length - failed} succeeded, ${failed} failed`));
  return `${lines.join('\n')}\n`;
}
