// Permission rules that cannot do what the operator wrote: a tool pattern that matches no
// tool of the plugin (a typo, a renamed tool), or a `when` argument that none of the rule's
// tools declares (so the condition never holds and a deny protects nothing).
import { toolNameMatcher, type JsonSchema } from '@airlock/core';
import type { PluginManifest } from '../manifest/manifest-schema.js';

interface ToolShape {
  readonly name: string;
  readonly parameters: JsonSchema;
}

// Where these appear, what a schema accepts is not a plain list of properties: no verdict.
const COMPOSED = ['allOf', 'anyOf', 'oneOf', '$ref', '$dynamicRef', 'if', 'not', 'patternProperties', 'dependentSchemas', 'unevaluatedProperties'];

/** A list's element schema (through lists of lists), or the schema itself when it is not a plain list. */
function elementSchema(schema: unknown): unknown {
  let current = schema;
  for (let depth = 0; depth < 64; depth += 1) {
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return current;
    const node = current as Record<string, unknown>;
    const items = node.items;
    if (Object.prototype.hasOwnProperty.call(node, 'properties') || typeof items !== 'object' || items === null || Array.isArray(items)) return current;
    if (COMPOSED.some((key) => Object.prototype.hasOwnProperty.call(node, key)) || Object.prototype.hasOwnProperty.call(node, 'prefixItems')) return current;
    current = items;
  }
  return current;
}

/**
 * What the schema says of an argument at this dotted path: surely `undeclared`; reached only
 * through a `map` whose entries declare the next name (`files.path` on `files: {
 * additionalProperties: { properties: { path } } }`: the policy reads only the map's key
 * literally named "path", never an entry's path, so a rule meant for the entries sees none);
 * or undefined when it is declared or the schema cannot tell.
 */
function pathVerdict(schema: unknown, dottedPath: string): { readonly kind: 'undeclared' } | { readonly kind: 'map'; readonly map: string; readonly key: string } | undefined {
  let current = schema;
  const segments = dottedPath.split('.');
  for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index] as string;
    // The policy looks through lists (`files.path` reaches every entry's path): so does this.
    current = elementSchema(current);
    if (typeof current !== 'object' || current === null || Array.isArray(current)) return undefined;
    const node = current as Record<string, unknown>;
    if (COMPOSED.some((key) => Object.prototype.hasOwnProperty.call(node, key))) return undefined;
    const properties = node.properties;
    if (typeof properties === 'object' && properties !== null && Object.prototype.hasOwnProperty.call(properties, segment)) {
      current = (properties as Record<string, unknown>)[segment];
      continue;
    }
    const entry = elementSchema(node.additionalProperties);
    const entryProperties = typeof entry === 'object' && entry !== null ? (entry as Record<string, unknown>).properties : undefined;
    if (index > 0 && typeof entryProperties === 'object' && entryProperties !== null && Object.prototype.hasOwnProperty.call(entryProperties, segment)) {
      return { kind: 'map', map: segments.slice(0, index).join('.'), key: segment };
    }
    return typeof properties === 'object' && properties !== null ? { kind: 'undeclared' } : undefined;
  }
  return undefined;
}

export function ruleMistakes(manifest: PluginManifest, tools: readonly ToolShape[]): string[] {
  if (tools.length === 0) return [];
  const names = tools.map((tool) => tool.name);
  const listed = names.length > 20 ? `${names.slice(0, 20).join(', ')}, …` : names.join(', ');
  const problems: string[] = [];
  (manifest.permissions?.rules ?? []).forEach((rule, index) => {
    const patterns = typeof rule.tool === 'string' ? [rule.tool] : rule.tool;
    const scoped = new Set<ToolShape>();
    for (const pattern of patterns) {
      const matches = toolNameMatcher(pattern);
      const hit = tools.filter((tool) => matches(tool.name));
      if (hit.length === 0) problems.push(`permissions.rules.${index}.tool "${pattern}" matches no tool of this plugin (its tools: ${listed})`);
      for (const tool of hit) scoped.add(tool);
    }
    if (scoped.size === 0) return;
    for (const argument of Object.keys(rule.when ?? {})) {
      const verdicts = [...scoped].map((tool) => ({ tool, verdict: pathVerdict(tool.parameters, argument) }));
      if (verdicts.every(({ verdict }) => verdict?.kind === 'undeclared')) {
        problems.push(`permissions.rules.${index}.when.${argument} names no argument declared by ${[...scoped].map((tool) => tool.name).join(', ')}, so the rule can never apply`);
        continue;
      }
      for (const { tool, verdict } of verdicts) {
        if (verdict?.kind === 'map') problems.push(`permissions.rules.${index}.when.${argument}: ${verdict.map} of ${tool.name} is a map, and a rule reads only its key named "${verdict.key}", never its entries' ${verdict.key}: no entry's value is checked (decide for the tool without "when", or give the argument a list of entries, which rules look through)`);
      }
    }
  });
  return problems;
}
