// A call's plugin log as MCP logging notifications: the plugin's order, MCP's level names,
// the session's floor, and the dropped-lines count; anything malformed in the metadata is skipped.
import type { ToolResult } from '@airlock/core';
import { describe, expect, it } from 'vitest';
import { callLogNotifications } from '../src/support/mcp-server.js';

function result(logs: unknown, logsDropped?: number): ToolResult {
  return { callId: '7', name: 'notes', isError: false, value: null, content: 'null', durationMs: 1, metadata: { logs, ...(logsDropped === undefined ? {} : { logsDropped }) } } as unknown as ToolResult;
}

describe('callLogNotifications', () => {
  const lines = [
    { level: 'debug', message: 'a' },
    { level: 'warn', message: 'b' },
    { level: 'loud', message: 'not a level' },
    { level: 'info', message: 42 },
    null,
    { level: 'error', message: 'c' },
    { level: 'info', message: 'd' },
  ];

  it('escapes controls, bidi and invisible characters a plugin or program wrote (ESC, OSC, U+202E, U+2028)', () => {
    const sent = callLogNotifications(result([{ level: 'info', message: 'ok\u001b[31mred\u001b]52;c;eA==\u0007 \u202egnp.exe\u2028x' }]), 'debug');
    expect(sent.map((notification) => notification.params)).toEqual([
      { level: 'info', logger: 'notes', data: 'ok\\x1b[31mred\\x1b]52;c;eA==\\x07 \\u202egnp.exe\\u2028x' },
    ]);
  });

  it('keeps the order, maps warn to warning, and skips what is not a line', () => {
    expect(callLogNotifications(result(lines), 'debug').map((notification) => notification.params)).toEqual([
      { level: 'debug', logger: 'notes', data: 'a' },
      { level: 'warning', logger: 'notes', data: 'b' },
      { level: 'error', logger: 'notes', data: 'c' },
      { level: 'info', logger: 'notes', data: 'd' },
    ]);
  });

  it('sends nothing below the session\'s level, and says how many lines the bound dropped', () => {
    const sent = callLogNotifications(result(lines, 12), 'warning');
    expect(sent.every((notification) => notification.method === 'notifications/message')).toBe(true);
    expect(sent.map((notification) => notification.params)).toEqual([
      { level: 'warning', logger: 'notes', data: 'b' },
      { level: 'error', logger: 'notes', data: 'c' },
      { level: 'warning', logger: 'notes', data: '12 more log lines dropped (the per-call bound)' },
    ]);
    expect(callLogNotifications(result(lines, 12), 'critical')).toEqual([]);
    expect(callLogNotifications(result(undefined), 'debug')).toEqual([]);
  });
});
