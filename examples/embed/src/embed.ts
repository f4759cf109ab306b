// Embedding Airlock in a service: third-party plugins in the sandbox, one trusted tool of
// your own, one policy over both, an approver for `ask`, and a model message in, tool
// messages out. Run it with `npm run build && npm start` (or `pnpm --filter
// @airlock/example-embed build && pnpm --filter @airlock/example-embed start`).
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createEngine, defineTool, type ApprovalRequest } from '@airlock/core';
import { createSandbox } from '@airlock/sandbox';
import { z } from 'zod';

// The example's plugins (examples/plugins); pass another folder as the first argument.
const pluginsDir = process.argv[2] ?? fileURLToPath(new URL('../../plugins/', import.meta.url));

// A host function plugins may be granted by name (manifest "capabilities"). Tenants never
// share an entry: the context says whose call it is.
const notes = new Map<string, string>();

const sandbox = createSandbox({
  // The standard workspace capability: a folder per tenant, which the example's write_file writes into.
  workspace: join(tmpdir(), 'airlock-embed-workspace'),
  // Under contention, tenant "paying" gets twice the threads of the others; alone, any tenant uses them all.
  fairShare: { weights: { paying: 2 } },
  capabilities: {
    'notes.get': (argument, context) => notes.get(`${context.tenant}:${String(argument)}`) ?? null,
  },
});

// Only the literal `true` approves. A real service asks a person; this one allows deletes
// inside notes/ and nothing else.
async function approve(request: ApprovalRequest): Promise<boolean> {
  return request.toolName === 'delete_file' && String(request.args.path).startsWith('notes/');
}

try {
  await sandbox.loadPlugins([pluginsDir]);

  const engine = createEngine({
    // The sandbox hands over its tools, its manifests' permissions (joined to the policy
    // below) and its classifiers (run inside their isolates) as one.
    sources: [sandbox],
    tools: [
      defineTool({
        name: 'now',
        description: 'The current time, ISO 8601.',
        parameters: z.object({}),
        execute: () => new Date().toISOString(),
      }),
    ],
    policy: { default: 'deny', rules: [{ tool: 'now', decision: 'allow' }] },
    approver: approve,
  });

  // What goes to the model: model-facing fields only, in the provider's format.
  const tools = engine.tools('anthropic');
  console.log(`offering ${tools.length} tools`);

  // What came back from the model: an Anthropic assistant message with tool calls.
  const assistantMessage = {
    role: 'assistant',
    content: [
      { type: 'tool_use', id: 'call_slug', name: 'slugify', input: { text: 'Airlock 0.1: Release Notes' } },
      { type: 'tool_use', id: 'call_time', name: 'now', input: {} },
      { type: 'tool_use', id: 'call_hosts', name: 'write_file', input: { path: '/etc/hosts', content: '10.0.0.5 staging' } },
      { type: 'tool_use', id: 'call_save', name: 'write_file', input: { path: 'notes/draft.md', content: '# Draft' } },
      { type: 'tool_use', id: 'call_delete', name: 'delete_file', input: { path: 'notes/draft.md' } },
    ],
  };

  const { results, messages } = await engine.runMessage('anthropic', assistantMessage, { tenant: 'acme' });
  for (const result of results) {
    console.log(result.isError ? `${result.name}: ${result.error.code} ${result.error.message}` : `${result.name}: ok ${JSON.stringify(result.value)}`);
  }
  // The next request to the model carries these as the user turn.
  console.log(JSON.stringify(messages).length > 0 ? `${messages.length} tool message(s) for the next turn` : 'no messages');
} finally {
  await sandbox.close();
}
