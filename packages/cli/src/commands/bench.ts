// airlock bench: scheduler and sandbox throughput and latency, with raw baselines
// measured in the same run; --json for github-action-benchmark, --baseline to gate CI.
import { constants } from 'node:fs';
import { access, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { comparable, rangeEnds, regressions, uncompared, toEntries, type BenchmarkEntry, type Metric } from '../bench/metrics.js';
import { ROUNDS } from '../bench/measure.js';
import { runSuite } from '../bench/suite.js';
import { parseArgs } from 'node:util';
import { withUsage } from '../support/parse-command-args.js';
import { stylist, useColor } from '../support/style.js';
import { UsageError } from '../support/usage-error.js';

export const BENCH_HELP = `Usage: airlock bench [options]

Measures the pipeline and scheduler (trusted tools, parallel and exclusive batches) and
the sandbox (warm and fresh realms, in-process and in the child process, a warm call of
a 256 KiB plugin against a small one, 10-call turns, new tenants back to back and at
idle workers, 100 tenants sharing the workers), each beside the
peers a user would pick instead, measured in the same run on the same {a,b} -> {sum}
tool: a direct call, raw Piscina (no-op, and with a warm isolated-vm context per worker
called with applySync, in this process and behind a child process's IPC, and with the
asynchronous apply untrusted code needs), a new isolated-vm context or isolate, and
QuickJS (quickjs-emscripten, warm and fresh contexts). A capability round trip (a
plugin asking a host function and getting its answer) is read against the same function
called directly in this process. Latencies are p50 and p99 in µs.

Every measurement runs in ${ROUNDS} interleaved rounds; a ratio is the median of its
per-round ratios, and --json records their range ("best..worst") for the gate.

Options:
  --quick                  about a tenth of the iterations (CI smoke runs)
  --json                   print a github-action-benchmark array instead of the table
  --kind <smaller|bigger>  which array --json prints: customSmallerIsBetter (default) or customBiggerIsBetter
  --metrics <ratios|all>   which metrics --json and --json-dir write (default: all; ratios: the gated ratios,
                           without those noted "not gated by default")
  --json-dir <dir>         also write both arrays, as <dir>/smaller.json and <dir>/bigger.json (the folder is
                           created and checked writable before measuring; the files are written after stdout)
  --baseline <file>        compare with an earlier --json output (repeat for both kinds)
  --max-regression <pct>   with --baseline: exit 1 when a metric got worse by more than pct percent, a decimal
                           number such as 25 or 7.5 (default 25)
  --gate <ratios|all>      which metrics --baseline gates on (default: ratios, which hold on noisy machines;
                           those noted "not gated by default" are left out, as by --metrics ratios)
  -h, --help               show this help

A ratio regressed only when its best round now is worse than the baseline's worst round
by more than the threshold: two runs of one build pass, a real regression moves every round.

Exit codes: 0 measured (and within the threshold), 1 a gated metric regressed, 2 bad usage.

Examples:
  airlock bench
  airlock bench --quick --json > bench.json
  airlock bench --json-dir out --metrics ratios
  airlock bench --quick --baseline out/smaller.json --baseline out/bigger.json`;

export async function benchCommand(argv: string[]): Promise<number> {
  const { values } = withUsage('bench', () => parseArgs({ args: argv, allowPositionals: false, strict: true, options: {
    quick: { type: 'boolean' },
    json: { type: 'boolean' },
    kind: { type: 'string' },
    metrics: { type: 'string' },
    'json-dir': { type: 'string' },
    baseline: { type: 'string', multiple: true },
    'max-regression': { type: 'string' },
    gate: { type: 'string' },
    help: { type: 'boolean', short: 'h' },
  } }));
  if (values.help === true) {
    process.stdout.write(`${BENCH_HELP}\n`);
    return 0;
  }
  const kind = values.kind ?? 'smaller';
  if (kind !== 'smaller' && kind !== 'bigger') throw new UsageError('--kind must be "smaller" or "bigger"');
  const gate = values.gate ?? 'ratios';
  if (gate !== 'ratios' && gate !== 'all') throw new UsageError('--gate must be "ratios" or "all"');
  // Written out as digits: Number() reads "" and " " as 0 (a gate that fails on any change) and takes 1e2 or 0x10.
  const rawRegression = values['max-regression'];
  if (rawRegression !== undefined && !/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(rawRegression)) throw new UsageError('--max-regression must be a non-negative decimal number of percent (such as 25 or 7.5)');
  const maxRegression = rawRegression === undefined ? 25 : Number(rawRegression);
  const only = values.metrics ?? 'all';
  if (only !== 'ratios' && only !== 'all') throw new UsageError('--metrics must be "ratios" or "all"');
  if (values['json-dir'] === '') throw new UsageError('--json-dir needs a folder');
  // Before measuring, not after: a folder that cannot be written would otherwise cost the whole run.
  if (values['json-dir'] !== undefined) await writableFolder(values['json-dir']);
  if (values.kind !== undefined && values.json !== true) throw new UsageError('--kind applies with --json only (it picks the array --json prints; --json-dir writes both)');
  const gateOnly = (['max-regression', 'gate'] as const).find((flag) => values[flag] !== undefined);
  if (gateOnly !== undefined && values.baseline === undefined) throw new UsageError(`--${gateOnly} applies with --baseline only`);
  const baseline = values.baseline === undefined ? undefined : (await Promise.all(values.baseline.map(readBaseline))).flat();

  const tty = process.stderr.isTTY === true;
  const metrics = await runSuite({
    quick: values.quick === true,
    ...(tty ? { onProgress: (step: number, total: number, label: string) => process.stderr.write(`\r\u001b[2Kbench [${step}/${total}] ${label}…`) } : {}),
  });
  if (tty) process.stderr.write('\r\u001b[2K');

  // Standard output first: should writing the files still fail, the results are not lost with them.
  if (values.json === true) process.stdout.write(`${JSON.stringify(toEntries(metrics, kind, only), null, 2)}\n`);
  else process.stdout.write(table(metrics, stylist(useColor(process.stdout))));
  if (values['json-dir'] !== undefined) {
    for (const direction of ['smaller', 'bigger'] as const) {
      const file = join(values['json-dir'], `${direction}.json`);
      await writeFile(file, `${JSON.stringify(toEntries(metrics, direction, only), null, 2)}\n`).catch((error: unknown) => {
        throw new UsageError(`--json-dir: cannot write ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'}); the results are on standard output`);
      });
    }
  }

  if (baseline === undefined) return 0;
  // A gate that compared nothing must not pass as if it had: a wrong or empty baseline file.
  if (comparable(metrics, baseline, gate) === 0) {
    process.stderr.write(`airlock bench: the baseline has none of this run's ${gate === 'ratios' ? 'ratios' : 'metrics'}, so nothing was compared (give an earlier "airlock bench --json" or --json-dir output)\n`);
    return 2;
  }
  // A baseline entry this run has no metric of (a renamed metric, a typo): said, not ignored.
  const known = new Set(metrics.map((metric) => metric.name));
  const strangers = baseline.map((entry) => entry.name).filter((name) => !known.has(name));
  if (strangers.length > 0) process.stderr.write(`airlock bench: ${strangers.length} of the baseline's entries name no metric of this run and were not compared (${strangers.slice(0, 5).join(', ')}${strangers.length > 5 ? ', …' : ''})\n`);
  // Gated in part: say which were not compared (only --baseline bigger.json, say), never pass them silently.
  const unseen = uncompared(metrics, baseline, gate);
  if (unseen.length > 0) process.stderr.write(`airlock bench: ${unseen.length} of this run's ${gate === 'ratios' ? 'ratios' : 'metrics'} are not in the baseline (or are 0 there) and were not compared (${unseen.slice(0, 5).join(', ')}${unseen.length > 5 ? ', …' : ''})\n`);
  const worse = regressions(metrics, baseline, maxRegression, gate);
  for (const regression of worse) {
    process.stderr.write(`airlock bench: ${regression.name} regressed ${regression.worseByPct}% (baseline ${regression.baseline}, now ${regression.current}; for ratios the baseline's worst round against this run's best; threshold ${maxRegression}%)\n`);
  }
  return worse.length > 0 ? 1 : 0;
}

/** Creates the folder if need be and checks it can be written, or says why not. */
async function writableFolder(dir: string): Promise<void> {
  try {
    await makeFolder(dir);
    if (!(await stat(dir)).isDirectory()) throw Object.assign(new Error('ENOTDIR'), { code: 'ENOTDIR' });
    await access(dir, constants.W_OK);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'ENOTDIR' || code === 'EEXIST' ? 'a part of the path is a file, not a folder' : code === 'EACCES' || code === 'EPERM' || code === 'EROFS' ? 'not writable' : `cannot be created (${code ?? 'error'})`;
    throw new UsageError(`--json-dir ${dir}: ${why}`);
  }
}

/**
 * mkdir -p, one folder at a time: Node's own recursive mkdir loops for ever where creating
 * answers ENOENT under a parent that exists (/proc/x).
 */
async function makeFolder(dir: string): Promise<void> {
  try {
    await mkdir(dir);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return;
    const parent = dirname(dir);
    if (code !== 'ENOENT' || parent === dir) throw error;
    await makeFolder(parent);
    await mkdir(dir).catch((again: NodeJS.ErrnoException) => {
      if (again.code !== 'EEXIST') throw again;
    });
  }
}

async function readBaseline(path: string): Promise<BenchmarkEntry[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--baseline ${path}: ${code === 'ENOENT' ? 'no such file' : code === 'EISDIR' ? 'is a folder (give the smaller.json or bigger.json in it)' : code !== undefined ? `cannot be read (${code})` : 'not valid JSON'}`);
  }
  const valid = Array.isArray(parsed) && parsed.every((entry) => typeof entry === 'object' && entry !== null && typeof entry.name === 'string' && typeof entry.value === 'number');
  if (!valid) throw new UsageError(`--baseline ${path}: expected an array of { name, unit, value } (an earlier "airlock bench --json")`);
  // Refused before minutes of measuring, not after: an empty baseline can gate nothing.
  if ((parsed as unknown[]).length === 0) throw new UsageError(`--baseline ${path}: holds no metrics (an earlier "airlock bench --json" holds a hundred)`);
  // Each entry checked before measuring too: a value that is no positive number, or a range
  // that is no "best..worst", would otherwise be passed over (or named "not in the baseline").
  (parsed as BenchmarkEntry[]).forEach((entry, index) => {
    const at = `--baseline ${path}: entry ${index}`;
    if (!METRIC_NAME.test(entry.name)) throw new UsageError(`${at}: "name" is no metric name (letters, digits and . _ - only)`);
    // Zero is kept (a count that was 0 gates nothing: it is listed as not compared).
    if (!(Number.isFinite(entry.value) && entry.value >= 0)) throw new UsageError(`${at} (${entry.name}): "value" must be a number, 0 or more`);
    if (entry.range !== undefined && rangeEnds(entry.range) === undefined) throw new UsageError(`${at} (${entry.name}): "range" must be "best..worst", two positive numbers`);
  });
  // None of airlock's own names (a baseline of another tool, or of nothing): no run can gate
  // against it, so it is refused now, not after minutes of measuring.
  if (!(parsed as BenchmarkEntry[]).some((entry) => METRIC_FAMILIES.some((family) => entry.name.startsWith(family)))) {
    throw new UsageError(`--baseline ${path}: names no metric airlock bench measures (theirs start with ${METRIC_FAMILIES.join(', ')}; give an earlier "airlock bench --json")`);
  }
  return parsed as BenchmarkEntry[];
}

const METRIC_NAME = /^[A-Za-z0-9_.-]{1,200}$/;
/** How every metric airlock bench measures is named (bench-two-runs.test.ts checks a run against it). */
const METRIC_FAMILIES = ['baseline.', 'code_mode.', 'peer.', 'remote.', 'sandbox.', 'tenancy.', 'trusted.'] as const;

function table(metrics: readonly Metric[], style: ReturnType<typeof stylist>): string {
  const width = Math.max(...metrics.map((metric) => metric.name.length));
  const rows = metrics.map((metric) => {
    const value = metric.value >= 100 ? metric.value.toFixed(0) : metric.value >= 10 ? metric.value.toFixed(1) : metric.value.toFixed(2);
    const note = metric.extra === undefined ? '' : style('dim', `  ${metric.extra}`);
    return `${metric.name.padEnd(width)}  ${value.padStart(10)} ${metric.unit.padEnd(8)}${metric.ratio ? style('cyan', ' ratio') : '      '}${note}`;
  });
  return `${style('bold', `${'metric'.padEnd(width)}  ${'value'.padStart(10)} unit`)}\n${rows.join('\n')}\n`;
}
