// End-to-end: the built binary, every command, every exit code, both provider formats.
import { describe, expect, it } from 'vitest';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { airlock, BIN, oneLine, ROOT } from './support/run-cli.js';

const PLUGINS = 'examples/plugins';
const T = 'test/fixtures/transcripts';

describe('help, version and unknown input', () => {
  it.each([[['--help']], [['run', '--help']], [['schemas', '--help']], [['check', '--help']], [['bench', '--help']]])('%j exits 0 with usage and an example', async (args) => {
    const { code, stdout } = await airlock(args);
    expect(code).toBe(0);
    expect(stdout).toMatch(/Usage: airlock/);
    expect(stdout).toMatch(/airlock \w+/);
  });

  it('--version prints the version', async () => {
    const { code, stdout } = await airlock(['--version']);
    expect(code).toBe(0);
    expect(stdout.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });

  it('an unknown command is exit 2 with one line', async () => {
    const { code, stderr } = await airlock(['launch']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('unknown command "launch"');
  });

  it('an unknown flag is exit 2 with one line', async () => {
    const { code, stderr } = await airlock(['run', '--plugns', PLUGINS]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain("Unknown option '--plugns'");
  });
});

describe('airlock run', () => {
  it('with no arguments runs the bundled example: the gate refuses /etc/hosts before any code runs', async () => {
    const { code, stdout } = await airlock(['run', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    const byId = Object.fromEntries(report.results.map((r: { callId: string }) => [r.callId, r]));
    expect(byId.call_hosts).toMatchObject({ name: 'write_file', isError: true, error: { code: 'PERMISSION_DENIED' } });
    expect(byId.call_save).toMatchObject({ isError: false, value: { written: true, path: 'notes/release-0.1.md' } });
    expect(byId.call_typo.error.code).toBe('INVALID_ARGS');
    expect(byId.call_fib.error.code).toBe('CPU_LIMIT');
  });

  it('--json prints the report of DESIGN.md: one result per call, in call order', async () => {
    const { code, stdout } = await airlock(['run', 'examples/transcript.json', '--plugins', PLUGINS, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout);
    expect(Object.keys(report).sort()).toEqual(['messages', 'results']);
    expect(report.results.map((r: { callId: string }) => r.callId)).toEqual(['call_count', 'call_slug', 'call_save', 'call_hosts', 'call_typo', 'call_fib']);
    for (const result of report.results) {
      const keys = Object.keys(result).sort();
      expect(keys).toEqual(result.isError ? ['callId', 'durationMs', 'error', 'isError', 'name'] : ['callId', 'durationMs', 'isError', 'name', 'value']);
      if (result.isError) expect(Object.keys(result.error).sort()).toEqual(['code', 'message']);
      expect(typeof result.durationMs).toBe('number');
    }
    expect(report.messages).toHaveLength(6);
    expect(report.messages[0]).toMatchObject({ role: 'tool', tool_call_id: 'call_count' });
  });

  it('piped without --json prints the OpenAI tool messages', async () => {
    const { code, stdout } = await airlock(['run', 'examples/transcript.json', '--plugins', PLUGINS]);
    expect(code).toBe(0);
    const messages = JSON.parse(stdout);
    expect(messages.map((m: { role: string }) => m.role)).toEqual(Array(6).fill('tool'));
  });

  it('answers Anthropic tool_use with one user message of tool_result blocks, errors flagged', async () => {
    const { code, stdout } = await airlock(['run', `${T}/anthropic.json`, '--plugins', PLUGINS]);
    expect(code).toBe(0);
    const [message] = JSON.parse(stdout);
    expect(message.role).toBe('user');
    expect(message.content.map((b: { tool_use_id: string }) => b.tool_use_id)).toEqual(['toolu_count', 'toolu_delete', 'toolu_unknown']);
    expect(message.content[0].is_error).toBeUndefined();
    expect(message.content[1]).toMatchObject({ is_error: true, content: expect.stringContaining('APPROVAL_UNAVAILABLE') });
    expect(message.content[2]).toMatchObject({ is_error: true, content: expect.stringContaining('UNKNOWN_TOOL') });
  });

  it('reads a transcript from standard input with "-"', async () => {
    const input = JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'slugify', arguments: '{"text":"Hello World"}' } }] });
    const { code, stdout } = await airlock(['run', '-', '--plugins', PLUGINS, '--json'], { input });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).results[0]).toMatchObject({ callId: 'c1', value: 'hello-world' });
  });

  it.each([
    ['no approver', [], 'APPROVAL_UNAVAILABLE'],
    ['--approve delete_file', ['--approve', 'delete_file'], undefined],
    ['--approve for another tool', ['--approve', 'write_file'], 'APPROVAL_UNAVAILABLE'],
    ['--approve-all', ['--approve-all'], undefined],
  ])('ask with %s', async (_case, flags, expected) => {
    const { code, stdout } = await airlock(['run', `${T}/openai-ask.json`, '--plugins', PLUGINS, '--json', ...flags]);
    expect(code).toBe(0);
    const [result] = JSON.parse(stdout).results;
    if (expected === undefined) expect(result).toMatchObject({ isError: false, value: { path: 'notes/old.md' } });
    else expect(result.error.code).toBe(expected);
  });

  it.each([
    ['a missing file', ['run', 'nope.json', '--plugins', PLUGINS], 'nope.json: no such file'],
    ['a file with no end (a device)', ['run', '/dev/zero', '--plugins', PLUGINS], '/dev/zero is larger than 67108864 bytes'],
    ['malformed JSON', ['run', '-', '--plugins', PLUGINS], 'standard input: not valid JSON'],
    ['a message without tool calls', ['run', `${T}/no-tool-calls.json`, '--plugins', PLUGINS], 'the last assistant message has no tool calls'],
    ['a transcript without --plugins', ['run', 'examples/transcript.json'], '--plugins <dir> is required'],
    ['a plugins path that does not exist', ['run', 'examples/transcript.json', '--plugins', 'no/such/dir'], 'no/such/dir: no such folder'],
  ])('%s is exit 2 with one line', async (_case, args, message) => {
    const { code, stderr } = await airlock(args, { input: '{ "role": ' });
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(message);
  });

  it('a folder redirected to standard input is said to be a folder, not empty (exit 2)', async () => {
    const folder = openSync(T, 'r');
    try {
      const child = spawn(process.execPath, [BIN, 'run', '-', '--plugins', PLUGINS], { cwd: ROOT, stdio: [folder, 'ignore', 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      expect(await new Promise((resolve) => child.on('close', resolve))).toBe(2);
      expect(oneLine(stderr)).toBe('airlock: standard input: is a folder, not a transcript file');
    } finally {
      closeSync(folder);
    }
  });

  it('an integer past 2^53 in a transcript whose inputs are objects is refused, not rounded silently (exit 2)', async () => {
    const message = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'read_file', input: { path: 'notes/a.md', id: 1 } }] };
    const { code, stderr } = await airlock(['run', '-', '--plugins', PLUGINS], { input: JSON.stringify(message).replace('"id":1', '"id":9007199254740993') });
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('standard input: call "toolu_1" holds the integer 9007199254740993, which JSON cannot carry exactly (it would become 9007199254740992)');
  });

  it('such an integer in an earlier, answered turn does not stop the last turn from running', async () => {
    const earlier = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_0', name: 'read_file', input: { path: 'notes/a.md', id: 1 } }] };
    const answered = { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_0', content: 'done' }] };
    const last = { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'slugify', input: { text: 'Hello World' } }] };
    const input = JSON.stringify([earlier, answered, last]).replace('"id":1', '"id":9007199254740993');
    const { code, stdout } = await airlock(['run', '-', '--plugins', PLUGINS, '--json'], { input });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).results[0]).toMatchObject({ callId: 'toolu_1', value: 'hello-world' });
  });

  it('a transcript that starts with a UTF-8 byte-order mark is read like any other', async () => {
    const transcript = await readFile(`${T}/openai-ask.json`, 'utf8');
    const { code, stdout } = await airlock(['run', '-', '--plugins', PLUGINS, '--json', '--approve-all'], { input: `\ufeff${transcript}` });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).results).toHaveLength(1);
  });

  it('a transcript that is not UTF-8 is refused, not run with U+FFFD in place of its bytes', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-utf8-'));
    const file = join(dir, 'latin1.json');
    const text = '{"role":"assistant","tool_calls":[{"id":"a","type":"function","function":{"name":"slugify","arguments":"{\\"text\\":\\"caf';
    await writeFile(file, Buffer.concat([Buffer.from(text), Buffer.from([0xe9]), Buffer.from('\\"}"}}]}')]));
    const { code, stderr } = await airlock(['run', file, '--plugins', PLUGINS, '--json']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(`${file}: is not valid UTF-8 text (near byte ${Buffer.byteLength(text)})`);
    await rm(dir, { recursive: true, force: true });
  });

  it('a bad manifest is exit 2 naming the manifest and the key', async () => {
    const { code, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', 'test/fixtures/bad-plugins/bad-manifest']);
    expect(code).toBe(2);
    const line = oneLine(stderr);
    expect(line).toContain('bad-manifest/airlock.plugin.json');
    expect(line).toContain('limits.memoryMb must be at most 512');
  });
});

describe('--capabilities', () => {
  const now = JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'now', arguments: '{}' } }] });

  it('offers the module\'s functions to plugins that are granted them', async () => {
    const { code, stdout } = await airlock(['run', '-', '--plugins', 'test/fixtures/capabilities/plugins', '--capabilities', 'test/fixtures/capabilities/host.mjs', '--tenant', 'acme', '--json'], { input: now });
    expect(code).toBe(0);
    expect(JSON.parse(stdout).results[0]).toMatchObject({ isError: false, value: { iso: '2026-11-30T00:00:00.000Z', tenant: 'acme' } });
  });

  it('without it, a plugin that needs a capability does not load (exit 2, naming the key)', async () => {
    const { code, stderr } = await airlock(['run', '-', '--plugins', 'test/fixtures/capabilities/plugins'], { input: now });
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('capabilities.0 names "clock.now", which this host does not offer');
  });

  it('a module that is missing or not an object of functions is exit 2', async () => {
    const missing = await airlock(['run', 'examples/transcript.json', '--plugins', PLUGINS, '--capabilities', 'nope.mjs']);
    expect(missing.code).toBe(2);
    expect(oneLine(missing.stderr)).toContain('--capabilities nope.mjs: no such module');
    const wrong = await airlock(['run', 'examples/transcript.json', '--plugins', PLUGINS, '--capabilities', 'examples/plugins/text/index.js']);
    expect(wrong.code).toBe(2);
    expect(oneLine(wrong.stderr)).toContain('"tools" must be a function');
  });
});

describe('airlock schemas', () => {
  it.each([
    ['openai', (t: Record<string, unknown>) => expect(t).toMatchObject({ type: 'function', function: { name: expect.any(String) } })],
    ['responses', (t: Record<string, unknown>) => expect(t).toMatchObject({ type: 'function', name: expect.any(String), strict: false })],
    ['anthropic', (t: Record<string, unknown>) => expect(t).toHaveProperty('input_schema.type', 'object')],
    ['gemini', (t: Record<string, unknown>) => expect(t).toHaveProperty('parametersJsonSchema.type', 'object')],
    ['mcp', (t: Record<string, unknown>) => expect(t).toHaveProperty('inputSchema.type', 'object')],
  ])('--format %s prints every tool in that format', async (format, check) => {
    const { code, stdout } = await airlock(['schemas', '--plugins', PLUGINS, '--format', format]);
    expect(code).toBe(0);
    const tools = JSON.parse(stdout);
    expect(tools).toHaveLength(7);
    tools.forEach(check);
    expect(stdout).not.toMatch(/timeoutMs|isConcurrencySafe|execute|cpuMs/);
  });

  it('MCP entries carry outputSchema for tools that declare one', async () => {
    const { stdout } = await airlock(['schemas', '--plugins', PLUGINS, '--format', 'mcp']);
    const wordCount = JSON.parse(stdout).find((t: { name: string }) => t.name === 'word_count');
    expect(wordCount.outputSchema).toMatchObject({ type: 'object', required: ['words', 'lines', 'characters'] });
  });

  it('leaves out a tool the manifest denies outright: no call of it could ever run', async () => {
    const { code, stdout } = await airlock(['schemas', '--plugins', 'test/fixtures/gate/plugins/four', '--format', 'anthropic']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout).map((t: { name: string }) => t.name).sort()).toEqual(['alpha', 'delta', 'gamma']);
  });

  it('an unknown format is exit 2', async () => {
    const { code, stderr } = await airlock(['schemas', '--plugins', PLUGINS, '--format', 'cohere']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('--format must be one of openai, responses, anthropic, gemini, mcp');
  });
});

describe('airlock check', () => {
  it('valid plugins pass with exit 0', async () => {
    const { code, stdout } = await airlock(['check', PLUGINS]);
    expect(code).toBe(0);
    expect(stdout).toContain('3 plugins ok');
  });

  it('reports every problem, not just the first, with exit 1', async () => {
    const { code, stdout } = await airlock(['check', 'test/fixtures/bad-plugins', '--json']);
    expect(code).toBe(1);
    const report = JSON.parse(stdout);
    const problems = report.plugins.flatMap((p: { problems: string[] }) => p.problems).join('\n');
    expect(problems).toContain('limits.memoryMb must be at most 512');
    expect(problems).toContain('name must be 1-64 lowercase');
    expect(problems).toContain('module must be a relative path');
    expect(problems).toContain('limits.cpuMs must be at least 1');
    expect(problems).toContain('limits.timeoutMs must be a number');
    expect(problems).toContain('permissions.default must be "allow", "deny" or "ask"');
    expect(problems).toContain('colour: unknown key');
    expect(problems).toContain('tools[1] ("no execute")');
    expect(problems).toContain('tools[2] ("string_root")');
    expect(problems).toContain('permissions.tools.ghost names no tool');
    expect(problems).toContain('capabilities.0 names "kv.get", which this host does not offer');
    expect(problems).toMatch(/names "kv\.get", which this host does not offer \(.*\); offer it with --kv <file>/);
    // In the same run as the capability it lacks: the plugin's module was described and its rules checked.
    expect(problems).toContain('permissions.tools.kv_wrte names no tool');
    // A tool's every problem, and the rules' beside tools that all have problems.
    expect(problems).toContain('tools[0] ("two_problems"): execute must be a function');
    expect(problems).toMatch(/tools\[0\] \("two_problems"\): .*parameters/);
    for (const problem of ['name must be 1-64 characters', 'description must be a non-empty string', 'parameters must be an object-rooted', 'isConcurrencySafe must be a function']) {
      expect(problems).toContain(`tools[1] ("bad name"): ${problem}`);
    }
    expect(problems).toMatch(/permissions\.rules\.0\.tool "zzz" matches no tool of this plugin \(its tools: two_problems/);
    expect(problems).not.toContain('permissions.tools.two_problems names no tool');
  });

  it('two plugins with one name are a problem for check (exit 1) and a load error for run (exit 2)', async () => {
    const checked = await airlock(['check', 'test/fixtures/duplicate-names']);
    expect(checked.code).toBe(1);
    expect(checked.stdout).toMatch(/two plugins are named "same": .*first and .*second/);
    const ran = await airlock(['run', 'examples/transcript.json', '--plugins', 'test/fixtures/duplicate-names']);
    expect(ran.code).toBe(2);
    expect(oneLine(ran.stderr)).toContain('two plugins are named "same"');
  });

  it('a path that does not exist is exit 2', async () => {
    const { code, stderr } = await airlock(['check', 'no/such/plugin']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('no such folder');
  });

  it('a tool name of 100,000 characters beside a backtracking rule glob: reported at once, never matched', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'airlock-long-name-'));
    try {
      await mkdir(join(dir, 'plugin'));
      await writeFile(join(dir, 'plugin', 'index.js'), `export default { tools: [{ name: 'ok', description: 'd', parameters: { type: 'object' }, execute: () => 1 }, { name: 'a'.repeat(100000), description: 'd', parameters: { type: 'object' }, execute: () => 1 }] };`);
      await writeFile(join(dir, 'plugin', 'airlock.plugin.json'), JSON.stringify({ name: 'long-name', module: './index.js', permissions: { rules: [{ tool: '*a*a*b', decision: 'deny' }] } }));
      const { code, stdout } = await airlock(['check', join(dir, 'plugin'), '--json']);
      expect(code).toBe(1);
      const problems = (JSON.parse(stdout) as { plugins: { problems: string[] }[] }).plugins[0]!.problems.join('\n');
      expect(problems).toContain('tools[1]');
      expect(problems).toContain('permissions.rules.0.tool "*a*a*b" matches no tool of this plugin (its tools: ok)');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('--plugins, as the other commands take it, is exit 2 saying how check takes folders', async () => {
    const { code, stderr } = await airlock(['check', '--plugins', PLUGINS]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('check takes plugin folders as plain arguments, without --plugins');
  });
});

describe('usage', () => {
  it('`airlock help <command>` is that command\'s help; an unknown one is exit 2', async () => {
    const [viaHelp, viaFlag] = await Promise.all([airlock(['help', 'run']), airlock(['run', '--help'])]);
    expect(viaHelp.code).toBe(0);
    expect(viaHelp.stdout).toBe(viaFlag.stdout);
    const unknown = await airlock(['help', 'runn']);
    expect(unknown.code).toBe(2);
    expect(oneLine(unknown.stderr)).toContain('no help on "runn"');
  });

  it('run --json with --format is exit 2: two outputs asked for, not one silently ignored', async () => {
    const { code, stderr } = await airlock(['run', 'examples/transcript.json', '--plugins', PLUGINS, '--json', '--format', 'cards']);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain('give one of them');
  });
});

describe('airlock bench', () => {
  it.each([
    [['bench', '--metrics', 'some'], '--metrics must be "ratios" or "all"'],
    [['bench', '--json-dir', ''], '--json-dir needs a folder'],
    [['bench', '--kind', 'bigger'], '--kind applies with --json only'],
    // Number() reads these as 0: a gate that would fail on any change at all.
    [['bench', '--baseline', 'package.json', '--max-regression', ''], '--max-regression must be a non-negative decimal number'],
    [['bench', '--baseline', 'package.json', '--max-regression', ' '], '--max-regression must be a non-negative decimal number'],
    [['bench', '--baseline', 'package.json', '--max-regression', '1e2'], '--max-regression must be a non-negative decimal number'],
    // Said before measuring, not after a whole run whose results it then lost.
    [['bench', '--quick', '--json', '--json-dir', 'package.json/sub'], '--json-dir package.json/sub: a part of the path is a file, not a folder'],
    [['bench', '--quick', '--json-dir', 'package.json'], '--json-dir package.json: a part of the path is a file, not a folder'],
    // Where creating answers ENOENT under a parent that exists, Node's recursive mkdir looped for ever.
    [['bench', '--quick', '--json-dir', '/proc/airlock-bench'], '--json-dir /proc/airlock-bench: cannot be created (ENOENT)'],
  ])('%j is exit 2 with one line', async (args, message) => {
    const { code, stderr } = await airlock(args);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(message);
  });

  it.each([
    ['not a bench array', 'package.json', 'expected an array of { name, unit, value }'],
    ['a folder', 'docs', 'docs: is a folder'],
    ['an empty array', 'test/fixtures/empty-array.json', 'holds no metrics'],
    // Each entry too: these were passed over, or named "not in the baseline".
    ['an entry with a negative value', 'test/fixtures/bench-baselines/negative-value.json', 'entry 0 (sandbox.warm_call): "value" must be a number, 0 or more'],
    ['an entry whose range is no "best..worst"', 'test/fixtures/bench-baselines/bad-range.json', 'entry 0 (sandbox.warm_call_ratio): "range" must be "best..worst"'],
    ['an entry whose name holds a terminal escape', 'test/fixtures/bench-baselines/control-name.json', 'entry 0: "name" is no metric name'],
    ['of names no airlock bench metric has', 'test/fixtures/bench-baselines/unrelated.json', 'names no metric airlock bench measures (theirs start with baseline., code_mode.,'],
  ])('a baseline that is %s is exit 2, before anything is measured', async (_case, file, message) => {
    const { code, stderr } = await airlock(['bench', '--baseline', file]);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(message);
  });
});
