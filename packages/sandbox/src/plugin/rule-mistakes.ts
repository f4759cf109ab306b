// Permission rules that cannot do what the operator wrote: a tool pattern that matches no
// tool of the plugin (a typo, a renamed tool), or a `when` argument that none of the rule's
// tools declares (so the condition never holds and a deny protects nothing).
import { createPolicy, toolNameMatcher, type JsonSchema } from '@airlock/core';
import type { PluginManifest } from '../manifest/manifest-schema.js';

interface ToolShape {
  readonly name: string;
  readonly parameters: JsonSchema;
}

// Where these appear, what a schema accepts is not a plain list of properties: no verdict.
const COMPOSED = ['allOf', 'anyOf', 'oneOf', '$dynamicRef', 'if', 'not', 'dependentSchemas', 'unevaluatedProperties'];
/** Keywords beside a `$ref` that change nothing a rule's path depends on (annotations, and constraints that add no property). */
const ANNOTATIONS = new Set(['$ref', 'title', 'description', '$comment', 'examples', 'default', 'deprecated', 'readOnly', 'writeOnly', 'type', 'required', 'minProperties', 'maxProperties', '$anchor', '$id']);
const MAX_REF_HOPS = 32;

type Node = Record<string, unknown>;

function isNode(value: unknown): value is Node {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function has(node: Node, key: string): boolean {
  return Object.prototype.hasOwnProperty.call(node, key);
}

/**
 * The schema a local `$ref` (`#`, `#/$defs/job`) leads to, followed to its end; `undefined`
 * when it cannot be told: a remote or broken reference, a cycle, or keywords beside the
 * reference that would have to be merged with its target.
 */
function dereferenced(schema: unknown, root: unknown): unknown {
  let current = schema;
  for (let hop = 0; hop < MAX_REF_HOPS; hop += 1) {
    if (!isNode(current) || !has(current, '$ref')) return current;
    const ref = current.$ref;
    if (typeof ref !== 'string' || !ref.startsWith('#')) return undefined;
    if (Object.keys(current).some((key) => !ANNOTATIONS.has(key))) return undefined;
    const fragment = ref.slice(1);
    current = fragment === '' || fragment.startsWith('/') ? atPointer(root, fragment) : withAnchor(root, fragment);
  }
  return undefined;
}

/** The subschema declaring `$anchor: name` (what `#name` refers to), found breadth-first within a bounded walk. */
function withAnchor(root: unknown, name: string): unknown {
  const queue: unknown[] = [root];
  for (let seen = 0; seen < queue.length && seen < 10_000; seen += 1) {
    const node = queue[seen];
    if (Array.isArray(node)) queue.push(...node);
    else if (isNode(node)) {
      if (node.$anchor === name) return node;
      queue.push(...Object.values(node));
    }
  }
  return undefined;
}

function atPointer(root: unknown, pointer: string): unknown {
  if (pointer === '') return root;
  if (!pointer.startsWith('/')) return undefined;
  let current = root;
  for (const raw of pointer.slice(1).split('/')) {
    const key = raw.replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isNode(current) || !has(current, key)) return undefined;
    current = current[key];
  }
  return current;
}

/** A list's element schema (through lists of lists), or the schema itself when it is not a plain list. */
function elementSchema(schema: unknown, root: unknown): unknown {
  let current = dereferenced(schema, root);
  for (let depth = 0; depth < 64; depth += 1) {
    if (!isNode(current)) return current;
    const items = dereferenced(current.items, root);
    if (has(current, 'properties') || !isNode(items)) return current;
    if (COMPOSED.some((key) => has(current as Node, key)) || has(current, 'prefixItems') || has(current, 'patternProperties')) return current;
    current = items;
  }
  return current;
}

/** The schemas of a map's entries: `additionalProperties` and every `patternProperties` value, with the branches of their `allOf`. */
function entrySchemas(node: Node, root: unknown): unknown[] {
  const entries: unknown[] = [];
  if (isNode(node.additionalProperties)) entries.push(node.additionalProperties);
  if (isNode(node.patternProperties)) entries.push(...Object.values(node.patternProperties));
  const resolved = entries.map((entry) => elementSchema(entry, root));
  // An entry's allOf holds all of its branches' properties: each branch declares fields of every entry.
  return resolved.flatMap((entry) => (isNode(entry) && Array.isArray(entry.allOf) ? [entry, ...entry.allOf.map((branch) => elementSchema(branch, root))] : [entry]));
}

/**
 * What the schema says of an argument at this dotted path: surely `undeclared`, or undefined
 * when it is declared (a property, a map entry's property, or a key the map accepts) or the
 * schema cannot tell. The policy looks through lists and, below the top level, through maps
 * (`files.path` reaches `files.a.path`): so does this.
 */
function pathVerdict(schema: unknown, dottedPath: string): { readonly kind: 'undeclared' } | undefined {
  let current = schema;
  const segments = dottedPath.split('.');
  segments: for (let index = 0; index < segments.length; index += 1) {
    const segment = segments[index] as string;
    // The policy looks through lists (`files.path` reaches every entry's path): so does this.
    current = elementSchema(current, schema);
    if (!isNode(current)) return undefined;
    const node = current;
    if (COMPOSED.some((key) => has(node, key))) return undefined;
    const properties = node.properties;
    if (isNode(properties) && has(properties, segment)) {
      current = properties[segment];
      continue;
    }
    for (const entry of entrySchemas(node, schema)) {
      if (index > 0 && isNode(entry) && isNode(entry.properties) && has(entry.properties, segment)) {
        current = entry.properties[segment];
        continue segments;
      }
    }
    // A map takes keys its properties do not list: a rule may name one (an environment's PATH).
    if (node.additionalProperties === true || isNode(node.additionalProperties) || has(node, 'patternProperties')) return undefined;
    return isNode(properties) ? { kind: 'undeclared' } : undefined;
  }
  return undefined;
}

const STRICTNESS = { allow: 0, ask: 1, deny: 2 } as const;

/**
 * Every tool's own decision (its permissions.tools entry, else permissions.default) is a rule
 * too, and the strictest matching rule wins: a rule less strict than all of them is never the
 * one that decides. Says which decision overrules it, or undefined when the rule can matter.
 */
function deadDecision(manifest: PluginManifest, decision: keyof typeof STRICTNESS, tools: readonly string[]): string | undefined {
  const permissions = manifest.permissions;
  const bases = tools.map((name) => {
    const own = permissions?.tools !== undefined && Object.hasOwn(permissions.tools, name) ? permissions.tools[name] : undefined;
    return own !== undefined ? { decision: own, source: `permissions.tools.${name} decides "${own}"` } : { decision: permissions?.default ?? 'allow', source: `permissions.default is "${permissions?.default ?? 'allow'}"` };
  });
  if (!bases.every((base) => STRICTNESS[base.decision] > STRICTNESS[decision])) return undefined;
  const sources = [...new Set(bases.map((base) => base.source))];
  return sources.length <= 3 ? sources.join(', ') : `${sources.slice(0, 3).join(', ')} (and more)`;
}

/** `declared`: every tool name the module declares, those whose other fields have problems too (default: the tools'). */
export function ruleMistakes(manifest: PluginManifest, tools: readonly ToolShape[], declared: readonly string[] = tools.map((tool) => tool.name)): string[] {
  if (declared.length === 0) return [];
  const names = declared;
  const listed = names.length > 20 ? `${names.slice(0, 20).join(', ')}, …` : names.join(', ');
  const problems: string[] = [];
  (manifest.permissions?.rules ?? []).forEach((rule, index) => {
    const patterns = typeof rule.tool === 'string' ? [rule.tool] : rule.tool;
    const scoped = new Set<ToolShape>();
    for (const pattern of patterns) {
      const matches = toolNameMatcher(pattern);
      const hit = tools.filter((tool) => matches(tool.name));
      if (!names.some((name) => matches(name))) problems.push(`permissions.rules.${index}.tool "${pattern}" matches no tool of this plugin (its tools: ${listed})`);
      for (const tool of hit) scoped.add(tool);
    }
    if (scoped.size === 0) return;
    // What the policy itself refuses (a glob it cannot match in linear time): the engine would, later.
    try {
      createPolicy({ default: 'allow', rules: [{ tool: '*', decision: rule.decision, ...(rule.when === undefined ? {} : { when: rule.when }) }] });
    } catch (error) {
      problems.push(`permissions.rules.${index}: ${(error as Error).message}`);
      return;
    }
    const dead = deadDecision(manifest, rule.decision, [...scoped].map((tool) => tool.name));
    if (dead !== undefined) problems.push(`permissions.rules.${index} decides "${rule.decision}", but ${dead} for every tool it names, and the strictest decision wins: the rule can never change a call (to allow some calls, let the tool's own decision be "allow" and deny or ask for the others with rules)`);
    for (const argument of Object.keys(rule.when ?? {})) {
      const verdicts = [...scoped].map((tool) => ({ tool, verdict: pathVerdict(tool.parameters, argument) }));
      if (verdicts.every(({ verdict }) => verdict?.kind === 'undeclared')) {
        problems.push(`permissions.rules.${index}.when.${argument} names no argument declared by ${[...scoped].map((tool) => tool.name).join(', ')}, so the rule can never apply`);
      }
    }
  });
  return problems;
}
