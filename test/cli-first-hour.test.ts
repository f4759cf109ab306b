// The command line as a new user meets it in the first hour: real provider output fed to
// `airlock run`, typos, Ctrl-C, copy-pasted help, and messages that read as English.
import { execFileSync, spawn } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { airlock, BIN, oneLine, ROOT } from './support/run-cli.js';

const PLUGINS = 'examples/plugins';
const count = (id: string) => ({ id, type: 'function', function: { name: 'word_count', arguments: '{"text":"one two three"}' } });
const assistant = { role: 'assistant', content: null, tool_calls: [count('c1')] };
const responsesCall = (id: string) => ({ type: 'function_call', id: `fc_${id}`, call_id: id, name: 'word_count', arguments: '{"text":"one two three"}' });

async function runJson(input: unknown): Promise<{ provider: unknown; ids: string[] }> {
  const { code, stdout, stderr } = await airlock(['run', '-', '--plugins', PLUGINS, '--json'], { input: JSON.stringify(input) });
  expect(stderr).toBe('');
  expect(code).toBe(0);
  const report = JSON.parse(stdout) as { messages: unknown[]; results: { callId: string; isError: boolean }[] };
  for (const result of report.results) expect(result.isError).toBe(false);
  return { provider: report.messages[0], ids: report.results.map((result) => result.callId) };
}

describe('airlock run accepts every documented provider input', () => {
  it.each([
    ['a Responses item array', [{ type: 'reasoning', summary: [] }, responsesCall('r1'), responsesCall('r2')], ['r1', 'r2'], { type: 'function_call_output' }],
    ['a single Responses function_call item', responsesCall('r1'), ['r1'], { type: 'function_call_output', call_id: 'r1' }],
    ['a raw Responses response', { object: 'response', output: [{ type: 'message', role: 'assistant', content: [] }, responsesCall('r1')] }, ['r1'], { type: 'function_call_output' }],
    ['a raw Chat Completions response', { object: 'chat.completion', choices: [{ index: 0, finish_reason: 'tool_calls', message: assistant }] }, ['c1'], { role: 'tool', tool_call_id: 'c1' }],
    ['{ "messages": [...] }', { messages: [{ role: 'user', content: 'count' }, assistant] }, ['c1'], { role: 'tool' }],
    ['an array of messages', [{ role: 'user', content: 'count' }, assistant], ['c1'], { role: 'tool' }],
    ['a raw Gemini response', { candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'g1', name: 'word_count', args: { text: 'one two' } } }] } }] }, ['g1'], { role: 'user' }],
  ])('%s', async (_, input, ids, firstMessage) => {
    const ran = await runJson(input);
    expect(ran.ids).toEqual(ids);
    expect(ran.provider).toMatchObject(firstMessage);
  });

  it('anything else is exit 2 with one line that lists the accepted shapes', async () => {
    const { code, stderr } = await airlock(['run', '-', '--plugins', PLUGINS], { input: '{"prompt":"hello"}' });
    expect(code).toBe(2);
    const line = oneLine(stderr);
    expect(line).toMatch(/^airlock: standard input: not a tool-call message: .*\(accepted: /);
    for (const shape of ['"tool_calls"', '"tool_use"', '"function_call"', '"functionCall"', '"messages"', '"choices"', '"output"', '"candidates"']) expect(line).toContain(shape);
  });

  it('a reply without tool calls says so', async () => {
    const { code, stderr } = await airlock(['run', '-', '--plugins', PLUGINS], { input: JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'Done.' } }] }) });
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe('airlock: standard input: not a tool-call message: choices[0].message has no tool calls');
  });

  it.each([
    ['OpenAI', { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'word_count', arguments: '{}' } }] }, 'tool_calls[0].id is missing'],
    ['Responses', [{ type: 'function_call', name: 'word_count', arguments: '{}' }], 'function_call[0].call_id is missing'],
    ['Anthropic', { role: 'assistant', content: [{ type: 'tool_use', name: 'word_count', input: {} }] }, 'tool_use[0].id is missing'],
  ])('%s: a call without an id is bad input: exit 2, one line', async (_, input, detail) => {
    const { code, stderr } = await airlock(['run', '-', '--plugins', PLUGINS], { input: JSON.stringify(input) });
    expect(code).toBe(2);
    const line = oneLine(stderr);
    expect(line).toContain(detail);
    expect(line).not.toContain('unexpected failure');
  });
});

/**
 * Runs the binary (plain `node bin.js`, as documented: the wrapper re-executes itself and
 * forwards the signal) and sends SIGINT once its stderr shows `cue`: to the binary alone, or
 * to its whole process group (sandbox processes included) as a terminal's Ctrl-C does.
 */
async function interruptedRun(args: string[], cue: string, target: string, signal: NodeJS.Signals = 'SIGINT'): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let stdout = '';
  let stderr = '';
  let interrupted = false;
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
    if (!stderr.includes(cue) || interrupted) return;
    interrupted = true;
    if (target === 'the binary') child.kill(signal);
    else process.kill(-child.pid!, signal);
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  return { code, stdout, stderr };
}

describe('Ctrl-C', () => {
  it.each(['the binary', 'its process group'])('a real SIGINT to %s prints the finished calls\' results and exits 130', async (target) => {
    const F = 'test/fixtures/interrupt';
    // The host capability's line: the second call is now running and waiting.
    const { code, stdout, stderr } = await interruptedRun(['run', `${F}/transcript.json`, '--plugins', `${F}/plugins`, '--capabilities', `${F}/host.mjs`, '--json'], 'waiting in call_wait', target);
    expect(code).toBe(130);
    // Piped stderr gets no progress lines: the capability's line and the summary only.
    expect(stderr).toBe('waiting in call_wait\nairlock: interrupted: 1 call finished, 2 cancelled\n');
    const report = JSON.parse(stdout) as { results: { callId: string; isError: boolean; value?: unknown; error?: { code: string } }[]; messages: unknown[] };
    expect(report.results).toEqual([
      expect.objectContaining({ callId: 'call_first', isError: false, value: { done: true } }),
      expect.objectContaining({ callId: 'call_wait', isError: true, error: expect.objectContaining({ code: 'ABORTED' }) }),
      expect.objectContaining({ callId: 'call_after', isError: true, error: expect.objectContaining({ code: 'ABORTED_BEFORE_DISPATCH' }) }),
    ]);
    expect(report.messages).toHaveLength(3);
  });
});

describe('SIGTERM to a command that does not handle it', () => {
  it('ends the run with a word and exit 143, not silently', async () => {
    const F = 'test/fixtures/interrupt';
    const { code, stderr } = await interruptedRun(['run', `${F}/transcript.json`, '--plugins', `${F}/plugins`, '--capabilities', `${F}/host.mjs`, '--json'], 'waiting in call_wait', 'the binary', 'SIGTERM');
    expect({ code, stderr }).toEqual({ code: 143, stderr: 'waiting in call_wait\nairlock: terminated\n' });
  });
});

describe('Ctrl-C while the commands load', () => {
  it('is never lost: exit 130 and nothing runs', async () => {
    // The binary run directly with its node flag, so the preload is in this very process.
    const hook = join(ROOT, 'test/fixtures/interrupt-startup/signal-while-loading.mjs');
    // --no-deprecation: Node 26 warns that module.register (the hook's way in, all Node 20 has) is deprecated.
    const child = spawn(process.execPath, ['--no-node-snapshot', '--no-deprecation', '--import', hook, BIN, 'run', 'test/fixtures/interrupt/transcript.json', '--plugins', 'test/fixtures/interrupt/plugins', '--capabilities', 'test/fixtures/interrupt/host.mjs', '--json'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect({ code, stdout }).toEqual({ code: 130, stdout: '' });
    expect(stderr).toMatch(/^airlock: interrupted/);
  });
});

describe('Ctrl-C while the plugins load', () => {
  it.each(['the binary', 'its process group'])('to %s: cancels every call before it starts, each printed as ABORTED_BEFORE_DISPATCH, exit 130', async (target) => {
    const F = 'test/fixtures/interrupt-loading';
    // The host's capabilities are loaded: the plugins are loading now (for a second).
    const { code, stdout, stderr } = await interruptedRun(['run', 'test/fixtures/interrupt/transcript.json', '--plugins', `${F}/plugins`, '--capabilities', `${F}/host.mjs`, '--json'], 'host capabilities loaded', target);
    expect(code).toBe(130);
    const report = JSON.parse(stdout) as { results: { callId: string; error?: { code: string } }[] };
    // "wait" is no tool of this plugin: UNKNOWN_TOOL is decided before anything is dispatched.
    expect(report.results.map((result) => [result.callId, result.error?.code])).toEqual([
      ['call_first', 'ABORTED_BEFORE_DISPATCH'],
      ['call_wait', 'UNKNOWN_TOOL'],
      ['call_after', 'ABORTED_BEFORE_DISPATCH'],
    ]);
    expect(stderr).toContain('airlock: interrupted: 1 call finished, 2 cancelled');
  });
});

describe('a reader that stops reading', () => {
  it('`| head`: the binary ends quietly as on SIGPIPE (141), with no stack trace', async () => {
    // Thousands of unknown-tool calls: more output than a pipe holds, so writing goes on after the reader left.
    const transcript = JSON.stringify({ role: 'assistant', tool_calls: Array.from({ length: 4000 }, (_, i) => ({ id: `c${i}`, type: 'function', function: { name: 'nope', arguments: '{}' } })) });
    const child = spawn(process.execPath, [BIN, 'run', '-', '--plugins', 'examples/plugins/workspace', '--json'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    // Read the first chunk, then go away, as head -c does.
    child.stdout.once('data', () => child.stdout.destroy());
    child.stdin.end(transcript);
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    expect(code).toBe(141);
  });
});

describe('an MCP client that closes the server\'s output', () => {
  it('serve over stdio ends quietly as on SIGPIPE (141), with no stack trace', async () => {
    const child = spawn(process.execPath, [BIN, 'serve', '--plugins', 'examples/plugins/math'], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1' }, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const send = (message: Record<string, unknown>): boolean => child.stdin.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
    send({ id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } });
    // Its answer read, the client stops reading, and asks on.
    await new Promise((resolve) => child.stdout.once('data', resolve));
    child.stdout.destroy();
    send({ method: 'notifications/initialized' });
    for (let id = 1; id <= 3; id += 1) send({ id, method: 'tools/list' });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(stderr).not.toMatch(/EPIPE|Unhandled|\n\s+at /);
    expect(code).toBe(141);
  });
});

describe('did you mean', () => {
  it.each([
    [['run', '--plugns', PLUGINS], "Unknown option '--plugns'; did you mean --plugins?"],
    [['check', '--jsn', PLUGINS], "Unknown option '--jsn'; did you mean --json?"],
    [['schemas', '--formt', 'openai'], "Unknown option '--formt'; did you mean --format?"],
    [['serve', '--aprove-all'], "Unknown option '--aprove-all'; did you mean --approve-all?"],
    [['bench', '--quik'], "Unknown option '--quik'; did you mean --quick?"],
    [['chek', PLUGINS], 'unknown command "chek" (did you mean "check"?)'],
  ])('%j', async (args, expected) => {
    const { code, stderr } = await airlock(args);
    expect(code).toBe(2);
    expect(oneLine(stderr)).toContain(expected);
  });

  it('--approve naming no loaded tool is refused, with the close name: a typo would approve nothing without a word', async () => {
    const transcript = JSON.stringify({ role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'delete_file', arguments: '{"path":"a.md"}' } }] });
    const { code, stderr } = await airlock(['run', '-', '--plugins', 'examples/plugins/workspace', '--approve', 'delete_flie'], { input: transcript });
    expect(code).toBe(2);
    expect(oneLine(stderr)).toBe('airlock: --approve "delete_flie": no loaded tool has that name (did you mean "delete_file"?)');
  });

  it('an option whose value looks like another option is refused in one line, saying how to pass it', async () => {
    const { code, stderr } = await airlock(['run', '-', '--approve', '--json'], { input: '[]' });
    expect(code).toBe(2);
    expect(stderr).toBe("airlock: Option '--approve' argument is ambiguous. Did you forget to specify the option argument for '--approve'? To specify an option argument starting with a dash use '--approve=-XYZ'. (see \"airlock run --help\")\n");
  });

  it('no suggestion when nothing is close', async () => {
    const { stderr } = await airlock(['run', '--zzzzzz']);
    expect(oneLine(stderr)).toBe('airlock: Unknown option \'--zzzzzz\' (see "airlock run --help")');
  });
});

describe('help and install', () => {
  it('serve --help never recommends `npx airlock` (an unrelated public package): it shows this install\'s bin.js', async () => {
    const { stdout } = await airlock(['serve', '--help']);
    expect(stdout).not.toMatch(/"npx"|npx airlock/);
    const entry = JSON.parse(/"airlock": (\{"command".*?\]\})/.exec(stdout)![1]!) as { command: string; args: string[] };
    expect(entry.command).toBe('node');
    expect(entry.args[0]).toBe(join(ROOT, 'packages/cli/dist/bin.js'));
    expect(statSync(entry.args[0]!).isFile()).toBe(true);
  });

  it('no README or doc sends anyone to `npx airlock`', () => {
    for (const file of ['README.md', 'docs/plugins.md', 'docs/architecture.md', 'docs/security.md', 'docs/errors.md']) {
      expect(readFileSync(join(ROOT, file), 'utf8')).not.toMatch(/npx (--yes )?airlock\b/);
    }
  });

  it('the linked binary is a committed file, so an install before the build links it without warnings', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'packages/cli/package.json'), 'utf8')) as { bin: Record<string, string>; files: string[] };
    const target = pkg.bin.airlock!;
    expect(target).not.toMatch(/^(\.\/)?dist\//);
    expect(pkg.files).toContain(target.replace(/^\.\//, '').split('/')[0]);
    expect(statSync(join(ROOT, 'packages/cli', target)).mode & 0o111).not.toBe(0);
  });

  it('the bin shim runs the binary', async () => {
    const child = spawn(process.execPath, [join(ROOT, 'packages/cli/bin/airlock.js'), '--version'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    expect(await new Promise((resolve) => child.on('close', resolve))).toBe(0);
    expect(out.trim()).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('messages read as English', () => {
  it('a denial quotes the operator\'s reason: "denied (system files under /etc are off limits)"', async () => {
    const { stdout } = await airlock(['run', '--json']);
    const report = JSON.parse(stdout) as { results: { callId: string; error?: { message: string } }[] };
    expect(report.results.find((result) => result.callId === 'call_hosts')!.error!.message).toBe('write_file: denied (system files under /etc are off limits)');
  });

  it('counts agree with their nouns', async () => {
    const { stdout } = await airlock(['check', 'examples/plugins/math']);
    expect(stdout).toContain('1 plugin ok');
    // serve's first log line, over stdio; the test ends it once it says it is serving.
    const child = spawn(process.execPath, [BIN, 'serve', '--plugins', 'examples/plugins/math'], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      if (stderr.includes('serving over stdio')) child.stdin.end();
    });
    await new Promise((resolve) => child.on('close', resolve));
    expect(stderr).toContain('airlock serve: 2 tools from 1 plugin: fibonacci, statistics');
  });
});

describe('output that cannot be written', () => {
  it('a full disk is one line and exit 2, never a stack trace', async () => {
    const full = openSync('/dev/full', 'w');
    try {
      const child = spawn(process.execPath, [BIN, 'check', 'examples/plugins/math'], { cwd: ROOT, stdio: ['ignore', full, 'pipe'] });
      let stderr = '';
      child.stderr!.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      const code = await new Promise((resolve) => child.on('close', resolve));
      expect(code).toBe(2);
      expect(stderr).toBe('airlock: could not write the output (ENOSPC)\n');
    } finally {
      closeSync(full);
    }
  });
});

describe('the wrapper killed with SIGKILL', () => {
  it('takes the command down with it: `node bin.js serve` killed -9 leaves no server running under init', async () => {
    // `node bin.js` re-runs itself with --no-node-snapshot; SIGKILL cannot be forwarded, so the
    // inner process must hear the wrapper's death itself. Its input is a FIFO this test holds
    // open (a pipe of Node's would be closed with the wrapper, and the server end on EOF).
    const folder = mkdtempSync(join(tmpdir(), 'airlock-kill9-'));
    const fifo = join(folder, 'input');
    execFileSync('mkfifo', [fifo]);
    const input = openSync(fifo, 'r+');
    const log = join(folder, 'stderr');
    const errors = openSync(log, 'w');
    const wrapper = spawn(process.execPath, [BIN, 'serve', '--plugins', 'examples/plugins/math'], { cwd: ROOT, stdio: [input, 'ignore', errors] });
    try {
      await expect.poll(() => readFileSync(log, 'utf8'), { timeout: 20_000 }).toContain('serving over stdio');
      const inner = Number(execFileSync('ps', ['-o', 'pid=', '--ppid', String(wrapper.pid)], { encoding: 'utf8' }).trim());
      expect(inner).toBeGreaterThan(0);
      const alive = (): boolean => {
        try {
          process.kill(inner, 0);
          return true;
        } catch {
          return false;
        }
      };
      wrapper.kill('SIGKILL');
      await expect.poll(alive, { timeout: 10_000 }).toBe(false);
      expect(readFileSync(log, 'utf8')).toContain('airlock serve: SIGTERM: cancelling the calls in progress');
    } finally {
      closeSync(input);
      closeSync(errors);
      rmSync(folder, { recursive: true, force: true });
    }
  });
});
