// What the CLI writes to a terminal cannot be steered by what it prints: cards, prompts
// and JSON show every control, bidi and invisible character as a visible escape, and the
// approval prompt shows every argument (or says plainly what it hides).
import { createEngine, defineTool, type ApprovalRequest, type JsonObject, type ToolResult } from '@airlock/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { approvalPrompt, elicitationMessage, fullArguments, wrap } from '../src/support/approval-prompt.js';
import { renderCards } from '../src/support/render-cards.js';
import { stylist } from '../src/support/style.js';
import { jsonText } from '../src/support/terminal-text.js';

const INVISIBLE = /[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]|[\ud800-\udfff]/u;
// Our own colour codes are the only escape sequences allowed out.
const OWN_SGR = new RegExp(`${String.fromCharCode(27)}\\[(?:31|32|36|39|2|22|1)m`, 'g');

// What an attacker puts in names, ids, arguments and messages: CSI and OSC sequences with
// BEL and ST terminators, 8-bit CSI/OSC/ST, bare CR, NEL, NUL, bidi overrides, tag characters.
const ATTACKS = [
  '\u001b[2J\u001b[H', '\r✓ ok  2 calls: 2 succeeded, 0 failed', '\u001b]8;;https://evil.example\u001b\\docs\u001b]8;;\u001b\\',
  '\u001b]0;owned\u0007', '\u009b2J', '\u009d8;;x\u009c', '\u0085next line', 'a\u0000b', '\u202egnp.exe', '\u2066x\u2069',
  'line\u2028sep', '\u{e0049}\u{e0067}\u{e006e}', '\u001bP+q\u001b\\', '\u001b[?1049h', '\u001b[1;1H\u001b[K', '\u007f\b\b\b',
];
const hostileText = fc.oneof(fc.constantFrom(...ATTACKS), fc.string({ unit: 'binary' }), fc.string({ unit: 'grapheme-composite' }));

function screenOf(text: string): string {
  return text.replace(OWN_SGR, '').replace(/\n/g, '');
}

describe('cards', () => {
  const echo = defineTool({ name: 'echo', description: 'echo', parameters: { type: 'object' }, execute: () => null });
  const engine = createEngine({ tools: [echo], policy: { default: 'allow' } });

  it('no field of any call or result puts a raw control character on the terminal', () => {
    fc.assert(fc.property(hostileText, hostileText, hostileText, hostileText, fc.boolean(), (name, id, arg, message, failed) => {
      const result: ToolResult = failed
        ? { callId: id, name, content: message, durationMs: 1, isError: true, error: { code: 'TOOL_ERROR', message } }
        : { callId: id, name, content: message, durationMs: 1, approvalMs: 2, isError: false, value: message };
      const args: JsonObject = { [arg]: arg, nested: { deep: [arg] } };
      for (const color of [false, true]) {
        const out = renderCards(engine, [{ name, args, result }, { name: 'echo', args, result }], stylist(color));
        expect(screenOf(out)).not.toMatch(INVISIBLE);
      }
    }), { numRuns: 300 });
  });

  it('a forged summary stays visible text on a line the real outcome starts', () => {
    const result: ToolResult = { callId: 'c1', name: 'write_file', content: '', durationMs: 1, isError: true, error: { code: 'PERMISSION_DENIED', message: 'denied\r\u001b[2K✓ ok\n2 calls: 2 succeeded, 0 failed' } };
    const out = renderCards(engine, [{ name: 'write_file', args: { path: '/etc/hosts\r\u001b[1A' }, result }], stylist(false));
    expect(out).toContain('write_file  ✗ PERMISSION_DENIED');
    expect(out).toContain('denied\\r\\x1b[2K✓ ok\\n2 calls: 2 succeeded, 0 failed');
    // An argument holding escaped characters is shown as JSON, so an escape and a real control read apart.
    expect(out).toContain('path: "/etc/hosts\\r\\u001b[1A"');
    expect(out.trimEnd().split('\n').at(-1)).toBe('1 call: 0 succeeded, 1 failed');
  });
});

describe('the approval prompt', () => {
  const request = (args: JsonObject, toolName = 'write_file'): ApprovalRequest => ({ callId: 'c', toolName, args, tenant: undefined, reason: 'permissions.tools.write_file in the ws plugin\'s manifest' });

  it('a short call stays on one line', () => {
    expect(approvalPrompt(request({ path: 'notes/old.md' }, 'delete_file'), 80)).toEqual({
      text: 'Approval needed (permissions.tools.write_file in the ws plugin\'s manifest).\nAllow delete_file({"path":"notes/old.md"})? [y/N] ',
      hidden: false,
      tool: 'delete_file',
    });
  });

  it('shows the whole of a long path, its dangerous tail included, wrapped to the width', () => {
    const path = `notes/${'a'.repeat(400)}/../../root/.ssh/authorized_keys`;
    const prompt = approvalPrompt(request({ path, content: 'ssh-ed25519 AAAA attacker' }), 60);
    expect(prompt.hidden).toBe(false);
    const lines = prompt.text.split('\n');
    expect(lines.every((line) => Array.from(line).length <= 60 || line.startsWith('Approval needed'))).toBe(true);
    expect(lines.slice(2, -1).map((line) => line.trim()).join('')).toBe(`path: ${JSON.stringify(path)}content: "ssh-ed25519 AAAA attacker"`);
    expect(prompt.text).toContain('Arguments of write_file (all shown):');
  });

  it('says plainly what it hides, and "v" shows all of it', () => {
    const content = `${'x'.repeat(5000)}MIDDLE${'y'.repeat(5000)}`;
    const prompt = approvalPrompt(request({ content, path: 'notes/a.md' }), 100);
    expect(prompt.hidden).toBe(true);
    expect(prompt.text).toContain('NOT ALL SHOWN: 8408 characters hidden; answer v to see everything');
    expect(prompt.text).toMatch(/\[y\/N\/v\] $/);
    expect(prompt.text).not.toContain('MIDDLE');
    expect(prompt.text).toContain('path: "notes/a.md"');
    const all = fullArguments(request({ content, path: 'notes/a.md' }), 100);
    expect(all.split('\n').map((line) => line.trim()).join('')).toContain(`content: "${content}"`);
  });

  it('hides arguments beyond the first forty, and says so', () => {
    const many = Object.fromEntries(Array.from({ length: 45 }, (_, index) => [`k${index}`, index]));
    const prompt = approvalPrompt(request(many), 80);
    expect(prompt.hidden).toBe(true);
    expect(prompt.text).toContain('5 more arguments hidden');
  });

  it('escapes the tool name, the reason, keys and values', () => {
    fc.assert(fc.property(hostileText, hostileText, fc.integer({ min: 40, max: 200 }), (key, value, width) => {
      const hostile: ApprovalRequest = { callId: 'c', toolName: `t${key}`, args: { [key]: value, [`${key}2`]: value.repeat(50) }, tenant: undefined, reason: value };
      const prompt = approvalPrompt(hostile, width);
      expect(prompt.text.replace(/\n/g, '')).not.toMatch(INVISIBLE);
      expect(fullArguments(hostile, width).replace(/\n/g, '')).not.toMatch(INVISIBLE);
    }), { numRuns: 300 });
  });

  it('an MCP client is asked the same way: every argument escaped, and whatever is cut said plainly', () => {
    expect(elicitationMessage(request({ path: 'notes/old.md' }, 'delete_file'))).toBe('Allow delete_file({"path":"notes/old.md"})? Approval needed: permissions.tools.write_file in the ws plugin\'s manifest.');
    // A long harmless note once pushed the path out of a 300-character message without a word.
    const long = elicitationMessage(request({ note: 'harmless '.repeat(40), path: '/etc/passwd' }));
    expect(long).toContain('"path":"/etc/passwd"');
    const cut = elicitationMessage(request({ content: `${'x'.repeat(5000)}MIDDLE${'y'.repeat(5000)}`, path: '/etc/passwd' }));
    expect(cut).toContain('NOT ALL SHOWN: 8408 characters hidden');
    expect(cut).toContain('path: "/etc/passwd"');
    expect(cut).not.toContain('MIDDLE');
    fc.assert(fc.property(hostileText, hostileText, (key, value) => {
      const hostile: ApprovalRequest = { callId: 'c', toolName: `t${key}`, args: { [key]: value, [`${key}2`]: value.repeat(50) }, tenant: undefined, reason: value };
      expect(elicitationMessage(hostile).replace(/\n/g, '')).not.toMatch(INVISIBLE);
    }), { numRuns: 300 });
  });

  it('wraps by code points, never splitting a character', () => {
    expect(wrap('😀'.repeat(30), 24, '  ', '    ')).toEqual(['  ' + '😀'.repeat(22), '    ' + '😀'.repeat(8)]);
  });
});

describe('JSON output', () => {
  it('parses to the same value and shows no invisible character raw', () => {
    fc.assert(fc.property(fc.jsonValue(), hostileText, (value, text) => {
      const data = { value, text, [text]: text };
      const out = jsonText(data);
      expect(JSON.parse(out)).toEqual(JSON.parse(JSON.stringify(data)));
      expect(out.replace(/\n/g, '')).not.toMatch(INVISIBLE);
    }), { numRuns: 300 });
  });
});
