// Asks a plugin, inside a throwaway isolate, what tools it has; checks every
// descriptor through core's own registration so a plugin tool obeys the same
// contract as a host tool.
import { AirlockError, defineTool, didYouMean, HOST_ONLY_FIELDS, MODEL_FACING_FIELDS, TOOL_NAME_PATTERN, ToolRegistry, type JsonSchema } from '@airlock/core';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { PluginSpec } from '../worker/worker-protocol.js';
import type { PluginManifest } from '../manifest/manifest-schema.js';
import type { SandboxHost } from '../host/sandbox-host.js';
import { ruleMistakes } from './rule-mistakes.js';
import { explainLoadFailure } from './explain-load-failure.js';

export interface PluginToolDescriptor {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  readonly deferLoading?: boolean;
  readonly output?: JsonSchema;
  readonly hasClassifier: boolean;
}

const descriptorSchema = z.object({
  invalid: z.string().optional(),
  name: z.unknown().optional(),
  description: z.unknown().optional(),
  parameters: z.unknown().optional(),
  deferLoading: z.unknown().optional(),
  output: z.unknown().optional(),
  hasExecute: z.boolean(),
  hasClassifier: z.boolean(),
  fields: z.string().optional(),
});

/** The fields a plugin's tool may have (docs/plugins.md); anything else is ignored, with a warning. */
const PLUGIN_TOOL_FIELDS: readonly string[] = [...MODEL_FACING_FIELDS, 'output', 'execute', 'isConcurrencySafe'];
/** As the realm lists a tool's own field names (realm-bootstrap.ts, fieldNames). */
const fieldNamesSchema = z.array(z.string().max(64)).max(32);
/** Warnings about its tools per plugin (ignored fields, heavy schemas); past it one line counts the rest (a plugin of thousands of tools would bury every other warning). */
const MAX_TOOL_WARNINGS = 20;
/** OpenAI's Chat Completions refuses a longer tool description on some models ("string too long ... maximum length 1024"). */
const PROVIDER_DESCRIPTION_CHARS = 1024;
/** A tool whose model-facing schema is larger costs every model request that much context. */
const HEAVY_SCHEMA_BYTES = 16 * 1024;

/**
 * `manifestPath` names the manifest; problems with the module's code or its tools are
 * attributed to the module file itself, the file its author has to open.
 */
export async function describePlugin(host: SandboxHost, spec: PluginSpec, manifest: PluginManifest, manifestPath: string, problems: string[], warnings: string[]): Promise<PluginToolDescriptor[]> {
  const modulePath = join(dirname(manifestPath), manifest.module);
  const outcome = await host.run({ kind: 'describe', plugin: spec });
  if (!outcome.ok) {
    problems.push(explainLoadFailure(outcome, spec.source, modulePath));
    return [];
  }
  const parsed = z.array(descriptorSchema).safeParse(JSON.parse(outcome.json));
  if (!parsed.success) {
    problems.push(`${modulePath}: the tool list has an unexpected shape`);
    return [];
  }
  if (parsed.data.length === 0) problems.push(`${modulePath}: exports no tools (the default export's "tools" array is empty)`);

  const toolWarnings: string[] = [];
  const registry = new ToolRegistry();
  const tools: PluginToolDescriptor[] = [];
  parsed.data.forEach((raw, index) => {
    const label = `${modulePath}: tools[${index}]${typeof raw.name === 'string' ? ` ("${raw.name}")` : ''}`;
    if (raw.invalid !== undefined) return void problems.push(`${label}: ${raw.invalid}`);
    // Reported, and the rest of the tool still checked: `check` lists every problem at once.
    if (!raw.hasExecute) problems.push(`${label}: execute must be a function`);
    for (const field of ignoredFields(raw.fields)) toolWarnings.push(`${label}: ${field}`);
    const weight = weightWarning(raw.description, raw.parameters);
    if (weight !== undefined) toolWarnings.push(`${label}: ${weight}`);
    try {
      // The same checks a host tool passes: name, description, lossless object-rooted schemas that compile.
      const checked = registry.register(defineTool({
        name: raw.name as string,
        description: raw.description as string,
        parameters: raw.parameters as JsonSchema,
        ...(raw.deferLoading === undefined ? {} : { deferLoading: raw.deferLoading as boolean }),
        ...(raw.output === undefined ? {} : { output: raw.output as JsonSchema }),
        execute: () => null,
      })).definition;
      if (raw.hasExecute) tools.push({
        name: checked.name,
        description: checked.description,
        parameters: checked.parameters,
        ...(checked.deferLoading === undefined ? {} : { deferLoading: checked.deferLoading }),
        ...(checked.output === undefined ? {} : { output: checked.output }),
        hasClassifier: raw.hasClassifier,
      });
    } catch (error) {
      problems.push(`${label}: ${AirlockError.isInstance(error) ? error.message : String(error)}`);
    }
  });

  warnings.push(...toolWarnings.slice(0, MAX_TOOL_WARNINGS));
  if (toolWarnings.length > MAX_TOOL_WARNINGS) warnings.push(`${modulePath}: ${toolWarnings.length - MAX_TOOL_WARNINGS} more warnings about its tools not listed`);
  // Every tool the module declares by a valid name, the ones with other problems too: a rule or
  // entry naming one of those is not (also) a rule that names nothing. Valid names only: a
  // rule's glob backtracks, and a name of 200,000 characters would hold this thread for days.
  const names = new Set(parsed.data.flatMap((raw) => (typeof raw.name === 'string' && TOOL_NAME_PATTERN.test(raw.name) ? [raw.name] : [])));
  for (const name of Object.keys(manifest.permissions?.tools ?? {})) {
    if (!names.has(name)) problems.push(`${manifestPath}: permissions.tools.${name} names no tool of this plugin${didYouMean(name, names)}`);
  }
  problems.push(...ruleMistakes(manifest, tools, [...names]).map((problem) => `${manifestPath}: ${problem}`));
  return tools;
}

/** What a tool's model-facing text costs, when it is more than a provider takes or than a request should carry. */
function weightWarning(description: unknown, parameters: unknown): string | undefined {
  let text: string | undefined;
  try {
    text = JSON.stringify({ description, parameters });
  } catch {
    // Nested past what the host's stack takes (thousands of levels): the schema's own check
    // reports that (defineTool: "nesting deeper than 256"), and there is no weight to tell.
    return undefined;
  }
  const bytes = Buffer.byteLength(text ?? '');
  if (bytes > HEAVY_SCHEMA_BYTES) return `its description and parameters are ${Math.round(bytes / 1024)} KiB of JSON, sent with every model request that offers the tool`;
  if (typeof description === 'string' && description.length > PROVIDER_DESCRIPTION_CHARS) {
    return `its description is ${description.length} characters: OpenAI refuses tool descriptions over ${PROVIDER_DESCRIPTION_CHARS} on some models`;
  }
  return undefined;
}

/** A warning for each field of a plugin's tool that nothing reads (the realm lists them). */
function ignoredFields(listed: string | undefined): string[] {
  let names: string[];
  try {
    const parsed = fieldNamesSchema.safeParse(JSON.parse(listed ?? '[]'));
    names = parsed.success ? parsed.data : [];
  } catch {
    names = [];
  }
  return names.filter((name) => !PLUGIN_TOOL_FIELDS.includes(name)).map((name) => {
    if ((HOST_ONLY_FIELDS as readonly string[]).includes(name)) {
      const setBy = name === 'timeoutMs' || name === 'maxOutputBytes' ? "the manifest's limits set it" : 'only the host sets it';
      return `"${name}" is ignored: ${setBy}, not the plugin's code`;
    }
    return `"${name}" is ignored: a plugin's tool has no such field${didYouMean(name, PLUGIN_TOOL_FIELDS)}`;
  });
}
