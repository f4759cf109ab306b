// Code Mode from the command line: the bundled example, `schemas --code-mode`, and
// `serve --code-mode` driven by the official MCP SDK client.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { airlock, BIN, oneLine, ROOT } from './support/run-cli.js';

describe('airlock run --code-mode', () => {
  it('a plugin tool named like the code tool is a usage error, not a tool hidden without a word', async () => {
    const served = await airlock(['serve', '--code-mode', '--http', '0', '--plugins', 'test/fixtures/code-mode-name-clash']);
    expect(served.code).toBe(2);
    expect(oneLine(served.stderr)).toContain('airlock: --code-mode: a plugin\'s tool is named "run_code"');
    for (const command of ['run', 'schemas']) {
      const { code, stderr } = await airlock([command, ...(command === 'run' ? ['-'] : []), '--code-mode', '--plugins', 'test/fixtures/code-mode-name-clash'], { input: JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'run_code', arguments: '{"code":"return 1"}' } }] }) });
      expect(code).toBe(2);
      expect(oneLine(stderr)).toBe('airlock: --code-mode: a plugin\'s tool is named "run_code", the name of the code tool, which would hide it; rename that tool, or run without --code-mode');
    }
  });

  it('runs the bundled example: one program gathers from several tools and returns a summary', async () => {
    const { code, stdout, stderr } = await airlock(['run', '--code-mode', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { messages: { content: string }[]; results: { name: string; isError: boolean; value: { result: Record<string, unknown>; calls: { name: string; code?: string }[] } }[] };
    expect(report.results).toHaveLength(1);
    const [result] = report.results;
    expect(result).toMatchObject({ name: 'run_code', isError: false });
    expect(result!.value.result).toEqual({
      saved: 'notes/airlock-0-1-release-notes.md',
      words: { Sandbox: 13, Gate: 13, Scheduler: 12 },
      meanWords: 38 / 3,
      contacts: ['gate-team@airlock.dev', 'sandbox@airlock.dev'],
      hosts: 'PERMISSION_DENIED: write_file: denied (system files under /etc are off limits)',
    });
    // Ten tool calls, each through the gate; the /etc write was refused there.
    expect(result!.value.calls.map((call) => `${call.name}${call.code === undefined ? '' : ` ${call.code}`}`).sort()).toEqual([
      'extract_emails', 'extract_emails', 'extract_emails', 'slugify', 'statistics', 'word_count', 'word_count', 'word_count', 'write_file', 'write_file PERMISSION_DENIED',
    ]);
    // The model reads one short summary, not ten tool outputs.
    expect(report.messages[0]!.content).toMatch(/^\{"saved":"notes\/airlock-0-1-release-notes.md".*\n\nconsole:\ninfo: saved notes\/airlock-0-1-release-notes.md$/s);
    // The program's write_file succeeded: where its file went, as for a direct call.
    expect(stderr).toMatch(/^airlock: workspace files are in .*airlock-workspace\/default\n$/);
  });

  it('--approve NAME approves that tool for the program\'s sub-calls, and only that one', async () => {
    const program = "const results = {}; for (const path of ['notes/a.md', 'notes/b.md']) { await tools.write_file({ path, content: 'x' }); } try { await tools.delete_file({ path: 'notes/a.md' }); results.deleted = true; } catch (error) { results.deleted = error.code; } return results;";
    const input = JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'p1', type: 'function', function: { name: 'run_code', arguments: JSON.stringify({ code: program }) } }] });
    const approved = await airlock(['run', '-', '--code-mode', '--plugins', 'examples/plugins', '--json', '--approve', 'delete_file'], { input });
    expect(approved.code).toBe(0);
    expect(JSON.parse(approved.stdout).results[0].value.result).toEqual({ deleted: true });
    // Approving another tool leaves delete_file's ask unanswered: no terminal, so unavailable.
    const other = await airlock(['run', '-', '--code-mode', '--plugins', 'examples/plugins', '--json', '--approve', 'write_file'], { input });
    expect(other.code).toBe(0);
    expect(JSON.parse(other.stdout).results[0].value.result).toEqual({ deleted: 'APPROVAL_UNAVAILABLE' });
    // A name no plugin has is still a usage error, in Code Mode as without it.
    const typo = await airlock(['run', '-', '--code-mode', '--plugins', 'examples/plugins', '--approve', 'delete_fil'], { input });
    expect(typo.code).toBe(2);
    expect(oneLine(typo.stderr)).toContain('--approve "delete_fil": no loaded tool has that name');
  });
});

describe('airlock schemas --code-mode', () => {
  it('prints only run_code, whose description declares the plugins\' tools in TypeScript', async () => {
    const { code, stdout } = await airlock(['schemas', '--code-mode', '--plugins', 'examples/plugins', '--format', 'anthropic']);
    expect(code).toBe(0);
    const tools = JSON.parse(stdout) as { name: string; description: string; input_schema: unknown }[];
    expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
    expect(tools[0]!.description).toContain('word_count(args: {\n    /** The text to count. */\n    text: string;\n  }): Promise<{\n    words: number;');
    expect(tools[0]!.description).toContain('delete_file(args:'); // ask: offered, asked when called
    expect(tools[0]!.input_schema).toMatchObject({ type: 'object', required: ['code'] });
  });

  it('--tenant without --code-mode is a usage error', async () => {
    const { code, stderr } = await airlock(['schemas', '--plugins', 'examples/plugins', '--tenant', 'acme']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe('airlock: --tenant applies to --code-mode only (the tool list is the same for every tenant)');
  });
});

describe('airlock serve --code-mode', () => {
  it('lists run_code only and runs a program whose calls go through the gate', async () => {
    const transport = new StdioClientTransport({ command: process.execPath, args: [BIN, 'serve', '--code-mode', '--plugins', 'examples/plugins'], cwd: ROOT, stderr: 'pipe' });
    const client = new Client({ name: 'test', version: '1.0.0' });
    await client.connect(transport);
    try {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['run_code']);
      const result = (await client.callTool({ name: 'run_code', arguments: { code: 'const { words } = await tools.word_count({ text: "one two three" }); const denied = await tools.write_file({ path: "/etc/passwd", content: "x" }).catch((e) => e.code); return { words, denied };' } })) as CallToolResult;
      expect(result.isError).toBeFalsy();
      expect((result.content[0] as { text: string }).text).toBe('{"words":3,"denied":"PERMISSION_DENIED"}');
    } finally {
      await client.close();
    }
  });
});
