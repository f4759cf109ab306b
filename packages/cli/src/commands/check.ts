// airlock check: loads and validates plugins and their manifests, reporting every problem.
import { createSandbox, crossPluginProblems, SandboxError } from '@airlock/sandbox';
import { basename } from 'node:path';
import { parseArgs } from 'node:util';
import { asFlagMessage, HOST_CAPABILITY_FLAGS, HOST_CAPABILITY_HELP, standardOptions, withOfferHint } from '../support/host-capabilities.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { warningText } from '../support/open-engine.js';
import { withUsage } from '../support/parse-command-args.js';
import { stylist, useColor } from '../support/style.js';
import { jsonText, visible } from '../support/terminal-text.js';
import { UsageError } from '../support/usage-error.js';

export const CHECK_HELP = `Usage: airlock check <plugin>... [--json]

Loads each plugin folder (or folder of plugin folders) in the sandbox and checks its
manifest, module and tools. Reports every problem found, not just the first, including
permission rules whose tool pattern matches no tool of their plugin. A manifest whose keys
are malformed is reported key by key, and its module is checked once those are fixed.

Options:
  --json              print a machine-readable report
  --capabilities <m>  the host-capabilities module, so plugins granted some can be checked
${HOST_CAPABILITY_HELP}
  -h, --help          show this help

Warnings (a secret the manifest names that no --secret gives: fetch would refuse the
requests it goes with) are shown but do not fail the check.

Exit codes: 0 every plugin is valid, 1 a plugin has problems, 2 bad usage (e.g. no such folder).

Example:
  airlock check ./examples/plugins/text`;

export async function checkCommand(argv: string[]): Promise<number> {
  const { values, positionals } = withUsage('check', () => {
    try {
      return parseArgs({ args: argv, allowPositionals: true, strict: true, options: { json: { type: 'boolean' }, capabilities: { type: 'string' }, ...HOST_CAPABILITY_FLAGS, help: { type: 'boolean', short: 'h' } } });
    } catch (error) {
      // Every other command takes --plugins: say how this one takes them.
      if ((error as Error).message.startsWith("Unknown option '--plugins")) throw new UsageError('check takes plugin folders as plain arguments, without --plugins: airlock check <plugin>...');
      throw error;
    }
  });
  if (values.help === true) {
    process.stdout.write(`${CHECK_HELP}\n`);
    return 0;
  }
  if (positionals.length === 0) throw new UsageError('name at least one plugin folder (see "airlock check --help")');
  const capabilities = await loadCapabilities(values.capabilities);
  let sandbox;
  try {
    sandbox = createSandbox({ ...standardOptions(values), ...(capabilities === undefined ? {} : { capabilities }) });
  } catch (error) {
    if (SandboxError.isInstance(error)) throw new UsageError(asFlagMessage(error.message));
    throw error;
  }
  let reports;
  try {
    reports = (await sandbox.checkPlugins(positionals)).map((report) => ({ ...report, problems: report.problems.map(withOfferHint) }));
  } catch (error) {
    if (SandboxError.isInstance(error)) throw new UsageError(error.message);
    throw error;
  } finally {
    await sandbox.close();
  }
  // Plugins checked together may not share a name or expose the same tool name.
  const duplicates = crossPluginProblems(reports);
  const failed = reports.some((report) => report.problems.length > 0) || duplicates.length > 0;
  if (values.json === true) {
    process.stdout.write(`${jsonText({ ok: !failed, plugins: reports, problems: duplicates })}\n`);
    return failed ? 1 : 0;
  }
  const style = stylist(useColor(process.stdout));
  // Names, folders, tool names and problems come from plugin folders and modules: escaped.
  for (const report of reports) {
    if (report.problems.length === 0) {
      process.stdout.write(`${style('green', '✓')} ${visible(String(report.name))} ${style('dim', visible(report.dir))}\n  tools: ${visible(report.tools.join(', '))}\n`);
    } else {
      process.stdout.write(`${style('red', '✗')} ${visible(report.name ?? basename(report.dir))} ${style('dim', visible(report.dir))}\n`);
      for (const problem of report.problems) process.stdout.write(`  - ${visible(problem)}\n`);
    }
    for (const warning of report.warnings) process.stdout.write(`  ${style('yellow', '!')} ${warningText(warning)}\n`);
  }
  for (const problem of duplicates) process.stdout.write(`${style('red', '✗')} ${visible(problem)}\n`);
  process.stdout.write(failed ? `${style('red', 'problems found')}\n` : `${style('green', `${reports.length} plugin${reports.length === 1 ? '' : 's'} ok`)}\n`);
  return failed ? 1 : 0;
}
