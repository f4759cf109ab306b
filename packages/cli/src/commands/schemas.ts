// airlock schemas: the model-facing tool list, in one provider's format.
import { PROVIDER_IDS, type ProviderId } from '@airlock/core';
import { HOST_CAPABILITY_FLAGS, HOST_CAPABILITY_HELP, standardOptions } from '../support/host-capabilities.js';
import { loadCapabilities } from '../support/load-capabilities.js';
import { openEngine } from '../support/open-engine.js';
import { parseArgs } from 'node:util';
import { withUsage } from '../support/parse-command-args.js';
import { jsonText } from '../support/terminal-text.js';
import { UsageError } from '../support/usage-error.js';

export const SCHEMAS_HELP = `Usage: airlock schemas --plugins <dir>... [--format <provider>] [--code-mode [--tenant <id>]]

Prints the model-facing tool list as JSON: only name, description, parameters and
deferLoading ever leave the host (plus outputSchema for MCP, which clients validate against).
The output is the array a request's tool list holds: OpenAI's and Responses' "tools",
Anthropic's "tools", the "functionDeclarations" of one Gemini tool, the "tools" of an MCP
tools/list result. A tool a manifest denies outright ("permissions": { "tools": { "x": "deny" } })
is left out: no call of it could ever run.

Options:
  --plugins <dir>     a plugin folder or a folder of plugin folders (repeatable)
  --format <provider> ${PROVIDER_IDS.join(' | ')} (default: openai)
  --capabilities <m>  the host-capabilities module, for plugins that are granted some
  --code-mode         print the one Code Mode tool, run_code, whose description declares
                      in TypeScript the tools a program may call
  --tenant <id>       with --code-mode: declare the tools this tenant may use
${HOST_CAPABILITY_HELP}
  -h, --help          show this help

Example:
  airlock schemas --plugins ./examples/plugins --format anthropic`;

export async function schemasCommand(argv: string[]): Promise<number> {
  const { values } = withUsage('schemas', () => parseArgs({ args: argv, allowPositionals: false, strict: true, options: { plugins: { type: 'string', multiple: true }, format: { type: 'string' }, capabilities: { type: 'string' }, 'code-mode': { type: 'boolean' }, tenant: { type: 'string' }, ...HOST_CAPABILITY_FLAGS, help: { type: 'boolean', short: 'h' } } }));
  if (values.help === true) {
    process.stdout.write(`${SCHEMAS_HELP}\n`);
    return 0;
  }
  const format = (values.format ?? 'openai') as ProviderId;
  if (!PROVIDER_IDS.includes(format)) throw new UsageError(`--format must be one of ${PROVIDER_IDS.join(', ')}`);
  if (values.tenant !== undefined && values['code-mode'] !== true) throw new UsageError('--tenant applies to --code-mode only (the tool list is the same for every tenant)');
  if (values.tenant !== undefined && !/^[\w.:@-]{1,128}$/.test(values.tenant)) throw new UsageError('--tenant must be 1-128 letters, digits or . _ : @ -');
  const codeMode = values['code-mode'] === true ? { tenant: values.tenant } : undefined;
  const opened = await openEngine(values.plugins ?? [], { capabilities: await loadCapabilities(values.capabilities), standard: standardOptions(values), codeMode });
  try {
    const tools = opened.engine.tools(format, { tenant: values.tenant });
    process.stdout.write(`${jsonText(tools)}\n`);
  } finally {
    await opened.close();
  }
  return 0;
}
