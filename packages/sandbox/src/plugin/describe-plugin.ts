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
type CheckedField = 'name' | 'description' | 'parameters' | 'deferLoading' | 'output';
const CHECKED_FIELDS: readonly CheckedField[] = ['name', 'description', 'parameters', 'deferLoading', 'output'];
/** What stands in for a field already reported, so `check` goes on to the next one. */
const STAND_INS: Readonly<Record<CheckedField, unknown>> = { name: 'tool', description: 'A tool.', parameters: Object.freeze({ type: 'object' }), deferLoading: undefined, output: undefined };

/** Which field a definition's refusal is about: named in its details, or in its label (a schema that is not lossless JSON). */
function faultyField(error: AirlockError): CheckedField | undefined {
  const details = error.details as { field?: unknown; label?: unknown } | undefined;
  const named = typeof details?.field === 'string' ? details.field : typeof details?.label === 'string' ? details.label.split(' ').at(-1) : undefined;
  return CHECKED_FIELDS.find((field) => field === named);
}

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
    const fieldNames = fieldNamesOf(raw.fields);
    if (fieldNames.includes('isConcurrencySafe') && !raw.hasClassifier) problems.push(`${label}: isConcurrencySafe must be a function`);
    for (const field of ignoredFields(fieldNames)) toolWarnings.push(`${label}: ${field}`);
    const weight = weightWarning(raw.description, raw.parameters);
    if (weight !== undefined) toolWarnings.push(`${label}: ${weight}`);
    // The same checks a host tool passes: name, description, lossless object-rooted schemas
    // that compile. A field at fault is reported and stood in for, so the next is checked too.
    const fields: Record<CheckedField, unknown> = { name: raw.name, description: raw.description, parameters: raw.parameters, deferLoading: raw.deferLoading, output: raw.output };
    let faulty = false;
    for (let attempt = 0; attempt <= CHECKED_FIELDS.length; attempt += 1) {
      try {
        const checked = (faulty ? new ToolRegistry() : registry).register(defineTool({
          name: fields.name as string,
          description: fields.description as string,
          parameters: fields.parameters as JsonSchema,
          ...(fields.deferLoading === undefined ? {} : { deferLoading: fields.deferLoading as boolean }),
          ...(fields.output === undefined ? {} : { output: fields.output as JsonSchema }),
          execute: () => null,
        })).definition;
        if (raw.hasExecute && !faulty) tools.push({
          name: checked.name,
          description: checked.description,
          parameters: checked.parameters,
          ...(checked.deferLoading === undefined ? {} : { deferLoading: checked.deferLoading }),
          ...(checked.output === undefined ? {} : { output: checked.output }),
          hasClassifier: raw.hasClassifier,
        });
        break;
      } catch (error) {
        const message = AirlockError.isInstance(error) ? error.message : String(error);
        // The label names the tool already; after a stand-in name the message's would mislead.
        const named = `tool "${String(fields.name)}" `;
        problems.push(`${label}: ${message.startsWith(named) ? message.slice(named.length) : message}`);
        faulty = true;
        const field = AirlockError.isInstance(error) ? faultyField(error) : undefined;
        if (field === undefined || fields[field] === STAND_INS[field]) break;
        fields[field] = STAND_INS[field];
      }
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
/** The tool's own field names as the realm listed them (none if the list cannot be read). */
function fieldNamesOf(listed: string | undefined): string[] {
  try {
    const parsed = fieldNamesSchema.safeParse(JSON.parse(listed ?? '[]'));
    return parsed.success ? parsed.data : [];
  } catch {
    return [];
  }
}

function ignoredFields(names: readonly string[]): string[] {
  return names.filter((name) => !PLUGIN_TOOL_FIELDS.includes(name)).map((name) => {
    if ((HOST_ONLY_FIELDS as readonly string[]).includes(name)) {
      const setBy = name === 'timeoutMs' || name === 'maxOutputBytes' ? "the manifest's limits set it" : 'only the host sets it';
      return `"${name}" is ignored: ${setBy}, not the plugin's code`;
    }
    return `"${name}" is ignored: a plugin's tool has no such field${didYouMean(name, PLUGIN_TOOL_FIELDS)}`;
  });
}
