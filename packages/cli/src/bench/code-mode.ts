// Code Mode figures, each read against its baseline in the same run:
// - a program making 10 sub-calls against the same 10 calls as one model turn: end-to-end
//   time, and the bytes of tool output the model reads (the program returns a summary);
// - the fixed cost of an empty program against raw isolated-vm: a new isolate, context,
//   module compile, evaluate and call on this thread (peers.ts), and a new context in a warm
//   isolate.
import { createEngine, type ToolCallRequest, type ToolResult } from '@airlock/core';
import { createCodeMode, createSandbox, type Sandbox } from '@airlock/sandbox';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { median, Rounds, ROUNDS } from './measure.js';
import type { Emit, Metric } from './metrics.js';
import { openPeers } from './peers.js';

// A search-like tool: each call answers a record of about 1 KiB, most of which the task does not need.
const RECORDS_PLUGIN = `export default { tools: [{
  name: 'fetch_record', description: 'One customer record by id.',
  parameters: { type: 'object', properties: { id: { type: 'integer' } }, required: ['id'] },
  isConcurrencySafe: () => true,
  execute: ({ id }) => ({ id, name: 'Customer ' + id, balanceCents: id * 1234 % 100000, notes: 'lorem ipsum '.repeat(80), tags: ['a', 'b', 'c'] }),
}] };`;

const TEN_CALLS: ToolCallRequest[] = Array.from({ length: 10 }, (_, i) => ({ id: `c${i}`, name: 'fetch_record', arguments: `{"id":${i + 1}}` }));
const TEN_CALL_PROGRAM = `const records = await Promise.all(Array.from({ length: 10 }, (_, i) => tools.fetch_record({ id: i + 1 })));
const total = records.reduce((sum, record) => sum + record.balanceCents, 0);
return { customers: records.length, totalBalanceCents: total, largest: records.sort((a, b) => b.balanceCents - a.balanceCents)[0].name };`;

function contentBytes(results: readonly ToolResult[]): number {
  return results.reduce((sum, result) => sum + Buffer.byteLength(result.content, 'utf8'), 0);
}

export async function benchCodeMode(quick: boolean, emit: Emit, progress: (label: string) => void): Promise<void> {
  progress('Code Mode: a 10-call program vs one 10-call turn, and an empty program vs raw isolated-vm');
  const count = (iterations: number): number => (quick ? Math.max(10, Math.round(iterations / 10)) : iterations);
  const dir = await mkdtemp(join(tmpdir(), 'airlock-bench-code-'));
  await writeFile(join(dir, 'index.js'), RECORDS_PLUGIN);
  await writeFile(join(dir, 'airlock.plugin.json'), JSON.stringify({ name: 'bench-records', module: './index.js', realm: 'warm', limits: { cpuMs: 5000, timeoutMs: 10_000 } }));
  const opened: Sandbox[] = [];
  const peers = await openPeers();
  try {
    const open = async (mode: 'process' | 'in-process') => {
      const sandbox = createSandbox({ threads: 2, mode });
      opened.push(sandbox);
      await sandbox.loadPlugins([dir]);
      const engine = createEngine({ sources: [sandbox], policy: { default: 'allow' } });
      const codeMode = createCodeMode({ engine, sandbox, limits: { cpuMs: 5000, timeoutMs: 10_000 } });
      const outer = createEngine({ tools: [codeMode.tool()], policy: { default: 'allow' } });
      const program = (code: string): ToolCallRequest[] => [{ id: 'program', name: 'run_code', arguments: { code } }];
      return { engine, outer, program };
    };
    const processMode = await open('process');
    const inProcess = await open('in-process');
    const tenCalls = processMode.program(TEN_CALL_PROGRAM);
    const empty = processMode.program('return null;');
    const emptyInProcess = inProcess.program('return null;');

    // Bytes the model reads: the turn's ten tool messages against the program's one.
    const turnResults = await processMode.engine.run(TEN_CALLS);
    const programResults = await processMode.outer.run(tenCalls);
    if (turnResults.some((result) => result.isError) || programResults.some((result) => result.isError)) throw new Error('the Code Mode bench calls failed');
    const turnBytes = contentBytes(turnResults);
    const programBytes = contentBytes(programResults);

    const rounds = await Rounds.run([
      { name: 'code_mode.turn10', iterations: count(200), warmup: count(20), body: () => processMode.engine.run(TEN_CALLS) },
      { name: 'code_mode.program10', iterations: count(200), warmup: count(20), body: () => processMode.outer.run(tenCalls) },
      { name: 'baseline.ivm_new_isolate', iterations: count(100), warmup: count(10), body: peers.ivmNewIsolate },
      { name: 'baseline.ivm_new_context', iterations: count(200), warmup: count(20), body: peers.ivmNewContext },
      { name: 'code_mode.empty_program', iterations: count(200), warmup: count(20), body: () => processMode.outer.run(empty) },
      { name: 'code_mode.empty_program_in_process', iterations: count(200), warmup: count(20), body: () => inProcess.outer.run(emptyInProcess) },
    ], ROUNDS);

    const ratio = (name: string, numerator: string, denominator: string, direction: Metric['direction'], extra: string): void => {
      const perRound = rounds.ratios(numerator, denominator);
      emit(name, 'x', median(perRound), direction, true, `${extra} (p50s, median of ${perRound.length} rounds)`, perRound);
    };
    const latency = (name: string, what: string): void => {
      const measured = rounds.latency(name);
      emit(`${name}_p50`, 'µs', measured.p50Us, 'smaller', false, what);
      emit(`${name}_p99`, 'µs', measured.p99Us, 'smaller', false);
    };
    latency('code_mode.turn10', 'one model turn of 10 concurrency-safe sandboxed calls (about 1 KiB each), process mode');
    latency('code_mode.program10', 'one program making the same 10 calls with Promise.all and returning a summary, process mode');
    ratio('code_mode.program10_vs_turn10_ratio', 'code_mode.program10', 'code_mode.turn10', 'smaller', 'a 10-call program / the same 10 calls as one turn, end to end');
    emit('code_mode.turn10_context_bytes', 'bytes', turnBytes, 'smaller', false, 'tool output the model reads after the 10-call turn');
    emit('code_mode.program10_context_bytes', 'bytes', programBytes, 'smaller', false, 'tool output the model reads after the program');
    // Deterministic: the same bytes every round, so its one value is its range.
    emit('code_mode.context_bytes_ratio', 'x', programBytes / turnBytes, 'smaller', true, 'bytes the model reads: program / 10-call turn', [programBytes / turnBytes]);
    latency('code_mode.empty_program', 'an empty program (return null): run_code through both engines, a fresh realm in the sandbox process');
    latency('code_mode.empty_program_in_process', 'the same, in-process mode');
    // baseline.ivm_new_isolate is measured again in these rounds for the ratios below, but its
    // latency is reported once, by the sandbox section: one name, one entry in --json.
    ratio('code_mode.empty_program_vs_new_isolate_ratio', 'code_mode.empty_program', 'baseline.ivm_new_isolate', 'smaller', 'empty program, process mode / raw new isolate + context + evaluate');
    ratio('code_mode.empty_program_in_process_vs_new_isolate_ratio', 'code_mode.empty_program_in_process', 'baseline.ivm_new_isolate', 'smaller', 'empty program, in-process mode / raw new isolate + context + evaluate');
    ratio('code_mode.empty_program_vs_new_context_ratio', 'code_mode.empty_program', 'baseline.ivm_new_context', 'smaller', 'empty program, process mode / raw new context + module + call in a warm isolate');
  } finally {
    for (const sandbox of opened) await sandbox.close();
    await peers.close();
    await rm(dir, { recursive: true, force: true });
  }
}
