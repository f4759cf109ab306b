// A plugin's console reaches the operator: per call in the --json report (results[i].logs),
// on stderr otherwise, bounded in lines and bytes, never in what the model reads.
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pluginFolder } from './support/plugin-harness.js';
import { airlock } from './support/run-cli.js';

let plugin: string;
let relay: string;
let work: string;
beforeAll(async () => {
  plugin = await pluginFolder('plugins/logging.js', { name: 'logging', limits: { cpuMs: 200, timeoutMs: 2000 } });
  relay = await pluginFolder('plugins/relay.js', { name: 'relay', capabilities: ['log'], limits: { timeoutMs: 5000 } });
  work = await mkdtemp(join(tmpdir(), 'airlock-console-'));
});
afterAll(async () => {
  await rm(plugin, { recursive: true, force: true });
  await rm(relay, { recursive: true, force: true });
  await rm(work, { recursive: true, force: true });
});

async function transcript(names: string[]): Promise<string> {
  const file = join(work, `${names.join('-')}.json`);
  const message = { role: 'assistant', content: null, tool_calls: names.map((name, index) => ({ id: `call_${index}`, type: 'function', function: { name, arguments: '{}' } })) };
  await writeFile(file, JSON.stringify(message));
  return file;
}

interface ReportResult {
  readonly name: string;
  readonly isError: boolean;
  readonly error?: { code: string };
  readonly logs?: { level: string; message: string }[];
  readonly logsDropped?: number;
}

describe('a plugin\'s console', () => {
  it('reaches the --json report per call, with levels, and stays out of the tool messages', async () => {
    const run = await airlock(['run', await transcript(['chatty']), '--plugins', plugin, '--json']);
    expect(run.code).toBe(0);
    const report = JSON.parse(run.stdout) as { messages: unknown[]; results: ReportResult[] };
    expect(report.results[0]!.logs).toEqual([
      { level: 'info', message: 'hello 42 {"n":1}' },
      { level: 'warn', message: 'careful \u001b[2J' },
      { level: 'error', message: 'boom' },
    ]);
    expect(JSON.stringify(report.messages)).not.toContain('hello');
  });

  it('is bounded per call: the first 100 lines are kept and the rest counted', async () => {
    const run = await airlock(['run', await transcript(['flood_logs']), '--plugins', plugin, '--json']);
    const [result] = (JSON.parse(run.stdout) as { results: ReportResult[] }).results;
    expect(result!.logs).toHaveLength(100);
    expect(result!.logs![99]).toEqual({ level: 'info', message: 'line 99' });
    expect(result!.logsDropped).toBe(900);
  });

  it('is kept for a call that failed, which is when it helps most', async () => {
    const run = await airlock(['run', await transcript(['spin_after_log']), '--plugins', plugin, '--json']);
    const [result] = (JSON.parse(run.stdout) as { results: ReportResult[] }).results;
    expect(result!.error?.code).toBe('CPU_LIMIT');
    expect(result!.logs).toEqual([{ level: 'info', message: 'about to spin' }]);
  });

  it('goes to stderr, escaped, when the output is tool messages', async () => {
    const run = await airlock(['run', await transcript(['chatty']), '--plugins', plugin]);
    expect(run.code).toBe(0);
    expect(run.stdout).not.toContain('hello');
    expect(run.stderr).toContain('chatty (call_0) info: hello 42 {"n":1}');
    expect(run.stderr).toContain('careful \\x1b[2J');
    expect(run.stderr).not.toContain('\u001b');
  });

  it('and the log capability keep the order the plugin emitted them in, in --json and on stderr in cards mode', async () => {
    const order = ['info: one', 'info: two', 'warn: three', 'error: four {"n":4}', 'info: five', 'debug: six \\x1b[2J', 'error: seven'];
    const json = await airlock(['run', await transcript(['interleave']), '--plugins', relay, '--json']);
    expect(json.code).toBe(0);
    const [result] = (JSON.parse(json.stdout) as { results: ReportResult[] }).results;
    expect(result!.logs!.map((line) => `${line.level}: ${line.message}`)).toEqual(order.map((line) => line.replace('\\x1b', '\u001b')));
    const cards = await airlock(['run', await transcript(['interleave']), '--plugins', relay, '--format', 'cards']);
    expect(cards.code).toBe(0);
    const lines = cards.stderr.split('\n').filter((line) => line.startsWith('interleave (call_0) '));
    expect(lines).toEqual(order.map((line) => `interleave (call_0) ${line}`));
    expect(cards.stderr).not.toContain('\u001b');
  });
});
