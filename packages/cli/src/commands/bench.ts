// airlock bench: scheduler and sandbox throughput and latency, with raw baselines
// measured in the same run; --json for github-action-benchmark, --baseline to gate CI.
import { readFile } from 'node:fs/promises';
import { regressions, toEntries, type BenchmarkEntry, type Metric } from '../bench/metrics.js';
import { runSuite } from '../bench/suite.js';
import { parseArgs } from 'node:util';
import { withUsage } from '../support/parse-command-args.js';
import { stylist, useColor } from '../support/style.js';
import { UsageError } from '../support/usage-error.js';

export const BENCH_HELP = `Usage: airlock bench [options]

Measures the pipeline and scheduler (trusted tools, parallel and exclusive batches) and
the sandbox (fresh and warm realms, in-process and in the child process, cold starts),
each beside its raw baseline measured in the same run: a direct call, a raw Piscina
no-op round trip, a raw isolated-vm isolate + context + compile.

Options:
  --quick                  about a tenth of the iterations (CI smoke runs)
  --json                   print a github-action-benchmark array instead of the table
  --kind <smaller|bigger>  which array --json prints: customSmallerIsBetter (default) or customBiggerIsBetter
  --baseline <file>        compare with an earlier --json output of the same kind
  --max-regression <pct>   with --baseline: exit 1 when a metric got worse by more than pct percent (default 25)
  --gate <ratios|all>      which metrics --baseline gates on (default: ratios, which hold on noisy machines)
  -h, --help               show this help

Exit codes: 0 measured (and within the threshold), 1 a gated metric regressed, 2 bad usage.

Examples:
  airlock bench
  airlock bench --quick --json > bench.json
  airlock bench --json --baseline previous.json --max-regression 20`;

export async function benchCommand(argv: string[]): Promise<number> {
  const { values } = withUsage('bench', () => parseArgs({ args: argv, allowPositionals: false, strict: true, options: {
    quick: { type: 'boolean' },
    json: { type: 'boolean' },
    kind: { type: 'string' },
    baseline: { type: 'string' },
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
  const maxRegression = values['max-regression'] === undefined ? 25 : Number(values['max-regression']);
  if (!Number.isFinite(maxRegression) || maxRegression < 0) throw new UsageError('--max-regression must be a non-negative number of percent');
  const baseline = values.baseline === undefined ? undefined : await readBaseline(values.baseline);

  const tty = process.stderr.isTTY === true;
  const metrics = await runSuite({
    quick: values.quick === true,
    ...(tty ? { onProgress: (step: number, total: number, label: string) => process.stderr.write(`\r\u001b[2Kbench [${step}/${total}] ${label}…`) } : {}),
  });
  if (tty) process.stderr.write('\r\u001b[2K');

  if (values.json === true) process.stdout.write(`${JSON.stringify(toEntries(metrics, kind), null, 2)}\n`);
  else process.stdout.write(table(metrics, stylist(useColor(process.stdout))));

  if (baseline === undefined) return 0;
  const worse = regressions(metrics, baseline, maxRegression, gate);
  for (const regression of worse) {
    process.stderr.write(`airlock bench: ${regression.name} regressed ${regression.worseByPct}% (baseline ${regression.baseline}, now ${regression.current}; threshold ${maxRegression}%)\n`);
  }
  return worse.length > 0 ? 1 : 0;
}

async function readBaseline(path: string): Promise<BenchmarkEntry[]> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(await readFile(path, 'utf8'));
  } catch (error) {
    throw new UsageError(`--baseline ${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : 'not valid JSON'}`);
  }
  const valid = Array.isArray(parsed) && parsed.every((entry) => typeof entry === 'object' && entry !== null && typeof entry.name === 'string' && typeof entry.value === 'number');
  if (!valid) throw new UsageError(`--baseline ${path}: expected an array of { name, unit, value } (an earlier "airlock bench --json")`);
  return parsed as BenchmarkEntry[];
}

function table(metrics: readonly Metric[], style: ReturnType<typeof stylist>): string {
  const width = Math.max(...metrics.map((metric) => metric.name.length));
  const rows = metrics.map((metric) => {
    const value = metric.value >= 100 ? metric.value.toFixed(0) : metric.value >= 10 ? metric.value.toFixed(1) : metric.value.toFixed(2);
    const note = metric.extra === undefined ? '' : style('dim', `  ${metric.extra}`);
    return `${metric.name.padEnd(width)}  ${value.padStart(10)} ${metric.unit.padEnd(8)}${metric.ratio ? style('cyan', ' ratio') : '      '}${note}`;
  });
  return `${style('bold', `${'metric'.padEnd(width)}  ${'value'.padStart(10)} unit`)}\n${rows.join('\n')}\n`;
}
