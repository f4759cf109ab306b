// The permission gate's policy: rules matched on tool name (and optionally argument
// values), decided outside every tool. Among matching rules the strictest wins, so
// rule order can never turn a denial into permission.
import picomatch from 'picomatch';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';
import { listCopy, plainOptions } from '../util/plain-options.js';
import { compileCondition, type ArgumentCondition, type CompiledCondition } from './path-condition.js';

export type Decision = 'allow' | 'deny' | 'ask';

export interface PolicyRule {
  /** Tool name or glob (`*`, `fs_*`); a list matches any. */
  readonly tool: string | readonly string[];
  /**
   * Argument conditions, all of which must hold: dotted argument path to a path glob on its
   * string value (or `{ matches, root }`). Values are normalized (and resolved against `root`)
   * before matching; a value with control characters, or one that climbs out of its root, is
   * refused: the call is denied whatever the rule's decision.
   */
  readonly when?: Readonly<Record<string, ArgumentCondition>>;
  /** Restricts the rule to these tenants (a non-empty list; a call without a tenant is DEFAULT_TENANT's). */
  readonly tenants?: readonly string[];
  readonly decision: Decision;
  readonly reason?: string;
}

export interface PolicyConfig {
  readonly default: Decision;
  readonly rules?: readonly PolicyRule[];
}

export interface PolicyVerdict {
  readonly decision: Decision;
  readonly reason: string;
}

export interface PermissionPolicy {
  decide(toolName: string, args: JsonObject, tenant: string | undefined): PolicyVerdict;
  /**
   * Whether every call of this tool by this tenant is denied, whatever its arguments (Code Mode
   * leaves such tools out of what it offers). Optional: without it no tool counts as denied outright.
   */
  deniesOutright?(toolName: string, tenant: string | undefined): boolean;
}

/**
 * The tenant a call that names none is matched as: the name the sandbox runs such calls under
 * (their isolates, workspace and kv), so a rule for "default" reaches them.
 */
export const DEFAULT_TENANT = 'default';

const STRICTNESS: Readonly<Record<Decision, number>> = { allow: 0, ask: 1, deny: 2 };
const DECISIONS: ReadonlySet<string> = new Set(['allow', 'deny', 'ask']);

/**
 * What the arguments hold at a dotted path. A list on the way is looked through, element by
 * element (`files.path` reaches the path of every entry of `files`), so wrapping an object in
 * a list cannot hide its value from a rule; a list at the end gives its entries. So is a map:
 * below the top level, an object without the key named is looked through too: an object or list
 * value as above, a string value as the path itself (`files.path` reaches `files.a.path` and
 * `files.b` of "a path or { path }"), whatever shape its schema gives the map.
 */
type Found =
  | { readonly kind: 'absent' }
  | { readonly kind: 'strings'; readonly values: readonly string[] }
  /** Something there is not a string: a path rule cannot judge it. */
  | { readonly kind: 'unjudgeable' };

function valuesAt(args: JsonObject, dottedPath: string): Found {
  const segments = dottedPath.split('.');
  const reached: JsonValue[] = [];
  let unjudgeable = false;
  // Where segments[from..] is looked for. A key may hold dots itself ("file.meta" or
  // "file.meta.path" for the path file.meta.path): every such key on the way is followed too,
  // so a tool that reads dotted keys as nested ones cannot have a value pass a rule unseen.
  const walk = (value: JsonValue, from: number, inMap: boolean): void => {
    if (Array.isArray(value)) {
      for (const entry of value) walk(entry, from, inMap);
      return;
    }
    if (value !== null && typeof value === 'object') {
      let found = false;
      let key = '';
      for (let to = from; to < segments.length; to += 1) {
        key = to === from ? segments[to]! : `${key}.${segments[to]!}`;
        if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
        found = true;
        const child = (value as JsonObject)[key] as JsonValue;
        if (to === segments.length - 1) reached.push(child);
        else walk(child, to + 1, false);
      }
      // A map's entries (or an object that holds the key further down): looked through, below the top level.
      if (!found && from > 0) for (const entry of Object.values(value)) walk(entry, from, true);
      return;
    }
    if (inMap) {
      // A map's entry that is a string where { path } was expected (a schema taking "a path or
      // { path }"): judged as the value itself, so it cannot hide from a deny; other scalars
      // in a map are no paths, and are passed over.
      if (typeof value === 'string') reached.push(value);
    } else if (value !== null) {
      // A string (or number) where the path expects an object: a schema that takes "a path or
      // { path }" gets the path itself here. It cannot be judged as the value the rule names.
      unjudgeable = true;
    }
  };
  walk(args, 0, false);
  if (unjudgeable) return { kind: 'unjudgeable' };
  if (reached.length === 0) return { kind: 'absent' };
  const values: string[] = [];
  for (const value of reached) {
    if (typeof value === 'string') values.push(value);
    // Entry by entry: spreading a list of 200,000 into push overflowed the stack.
    else if (Array.isArray(value) && value.every((entry) => typeof entry === 'string')) for (const entry of value as string[]) values.push(entry);
    else return { kind: 'unjudgeable' };
  }
  return { kind: 'strings', values };
}

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly matchesTool: (name: string) => boolean;
  readonly conditions: readonly CompiledCondition[];
}

const RULE_KEYS = ['tool', 'when', 'tenants', 'decision', 'reason'] as const;

/**
 * A rule's `when`, read once: a plain object (or one without a prototype) whose own string keys,
 * enumerable or not, are the argument paths. Anything else is refused: a Map, a class instance
 * or an object whose conditions it inherits would otherwise give no conditions, and an allow
 * with none allows every call. So is a `when` that names no argument.
 */
function conditionsOf(when: unknown, path: string): [string, ArgumentCondition][] {
  const refused = (why: string): AirlockError => new AirlockError('INVALID_OPTION', `${path} ${why}`, { path });
  let entries: [string, ArgumentCondition][];
  try {
    if (typeof when !== 'object' || when === null || Array.isArray(when)) throw refused('must be an object of argument conditions');
    const prototype: unknown = Reflect.getPrototypeOf(when);
    if (prototype !== Object.prototype && prototype !== null) throw refused('must be a plain object of argument conditions (not a Map, a class instance or an object that inherits them)');
    const keys = Reflect.ownKeys(when);
    if (keys.some((key) => typeof key !== 'string')) throw refused('must have argument paths as its keys, not symbols');
    entries = (keys as string[]).map((key) => [key, (when as Record<string, ArgumentCondition>)[key]!]);
  } catch (error) {
    if (AirlockError.isInstance(error)) throw error;
    throw new AirlockError('INVALID_OPTION', `${path} could not be read (a getter or proxy trap threw)`, { path }, { cause: error });
  }
  if (entries.length === 0) throw refused('names no argument: leave it out for a rule on every call');
  return entries;
}

function compileRule(given: unknown, index: number): CompiledRule {
  const path = `policy.rules[${index}]`;
  const rule = plainOptions<PolicyRule>(given, RULE_KEYS, path) as PolicyRule;
  if (typeof rule.decision !== 'string' || !DECISIONS.has(rule.decision)) {
    throw new AirlockError('INVALID_OPTION', `${path}.decision must be "allow", "deny" or "ask"`, { path: `${path}.decision` });
  }
  const globs: unknown[] = typeof rule.tool === 'string' ? [rule.tool] : Array.isArray(rule.tool) ? listCopy(rule.tool as unknown[]) : [];
  if (globs.length === 0 || globs.some((glob) => typeof glob !== 'string' || glob === '')) {
    throw new AirlockError('INVALID_OPTION', `${path}.tool must be a non-empty name or glob, or a list of them`, { path: `${path}.tool` });
  }
  // A string would be read letter by letter, and an empty list would make a rule for nobody.
  const tenants = Array.isArray(rule.tenants) ? listCopy(rule.tenants as unknown[]) : rule.tenants;
  if (tenants !== undefined && (!Array.isArray(tenants) || tenants.length === 0 || tenants.some((tenant) => typeof tenant !== 'string' || tenant === ''))) {
    throw new AirlockError('INVALID_OPTION', `${path}.tenants must be a non-empty list of tenant names`, { path: `${path}.tenants` });
  }
  if (rule.reason !== undefined && typeof rule.reason !== 'string') throw new AirlockError('INVALID_OPTION', `${path}.reason must be a string`, { path: `${path}.reason` });
  const conditions = rule.when === undefined ? [] : conditionsOf(rule.when, `${path}.when`).map(([argument, condition]) => compileCondition(argument, condition, `${path}.when.${argument}`));
  const frozen: PolicyRule = { ...rule, tool: globs as string[], ...(tenants === undefined ? {} : { tenants: [...(tenants as string[])] }) };
  return { rule: frozen, matchesTool: toolNameMatcher(globs as string[]), conditions };
}

/**
 * The tool-name matcher the policy uses (picomatch globs), for anyone scoping rules to tools.
 * It takes exactly one argument, so `names.filter(toolNameMatcher(glob))` is safe: picomatch's
 * own matcher reads a second argument (returnObject) and would answer an index with a truthy object.
 */
export function toolNameMatcher(globs: string | readonly string[]): (name: string) => boolean {
  const matcher = picomatch(typeof globs === 'string' ? globs : [...globs], { dot: true });
  return (name: string) => typeof name === 'string' && matcher(name) === true;
}

export function createPolicy(given: PolicyConfig): PermissionPolicy {
  const config = plainOptions<PolicyConfig>(given, ['default', 'rules'], 'policy', 'an object ({ default, rules? }) or a PermissionPolicy') as PolicyConfig;
  if (typeof config.default !== 'string' || !DECISIONS.has(config.default)) {
    throw new AirlockError('INVALID_OPTION', 'policy.default must be "allow", "deny" or "ask"', { path: 'policy.default' });
  }
  if (config.rules !== undefined && !Array.isArray(config.rules)) throw new AirlockError('INVALID_OPTION', 'policy.rules must be a list of rules', { path: 'policy.rules' });
  const rules = Array.prototype.map.call(config.rules ?? [], compileRule) as CompiledRule[];
  return {
    decide(toolName, args, tenant) {
      let verdict: PolicyVerdict | undefined;
      for (const { rule, matchesTool, conditions } of rules) {
        if (!matchesTool(toolName)) continue;
        if (rule.tenants !== undefined && !rule.tenants.includes(tenant ?? DEFAULT_TENANT)) continue;
        let holds = true;
        for (const condition of conditions) {
          const found = valuesAt(args, condition.argument);
          // An absent argument meets no condition; a list of strings is judged entry by entry.
          if (found.kind === 'absent') {
            holds = false;
            continue;
          }
          if (found.kind === 'unjudgeable') {
            // A number, object or nested list cannot be judged as a path: a restricting rule then
            // applies (fail closed), a permitting one does not.
            if (rule.decision === 'allow') holds = false;
            continue;
          }
          const values = found.values;
          // A restricting rule applies when any entry matches; a permitting one only when every entry does.
          let any = false;
          let every = values.length > 0;
          for (const entry of values) {
            const outcome = condition.evaluate(entry);
            // A value a rule cannot judge is never let through, whatever the rule would decide.
            if ('refused' in outcome) return { decision: 'deny', reason: `${describeRule(rule)}: ${outcome.refused}` };
            if (outcome.holds) any = true;
            else every = false;
          }
          if (!(rule.decision === 'allow' ? every : any)) holds = false;
        }
        if (!holds) continue;
        if (verdict === undefined || STRICTNESS[rule.decision] > STRICTNESS[verdict.decision]) {
          verdict = { decision: rule.decision, reason: rule.reason ?? describeRule(rule) };
        }
      }
      return verdict ?? { decision: config.default, reason: `the policy default for "${toolName}" is ${config.default}` };
    },
    deniesOutright(toolName, tenant) {
      // Rules without conditions decide for every argument; a conditional allow or ask means some arguments may pass.
      let unconditional: Decision | undefined;
      let someArgumentsMayPass = false;
      for (const { rule, matchesTool, conditions } of rules) {
        if (!matchesTool(toolName)) continue;
        if (rule.tenants !== undefined && !rule.tenants.includes(tenant ?? DEFAULT_TENANT)) continue;
        if (conditions.length > 0) someArgumentsMayPass ||= rule.decision !== 'deny';
        else if (unconditional === undefined || STRICTNESS[rule.decision] > STRICTNESS[unconditional]) unconditional = rule.decision;
      }
      if (unconditional !== undefined) return unconditional === 'deny';
      return config.default === 'deny' && !someArgumentsMayPass;
    },
  };
}

function describeRule(rule: PolicyRule): string {
  const tools = typeof rule.tool === 'string' ? rule.tool : rule.tool.join(', ');
  const when = Object.entries(rule.when ?? {}).map(([argument, condition]) => describeCondition(argument, condition));
  return `the policy rule "${rule.decision} ${tools}${when.length > 0 ? ` when ${when.join(' and ')}` : ''}"`;
}

function describeCondition(argument: string, condition: ArgumentCondition): string {
  if (typeof condition === 'string') return `${argument} matches ${condition}`;
  if (Array.isArray(condition)) return `${argument} matches ${condition.join(' | ')}`;
  const { matches, root } = condition as Exclude<ArgumentCondition, string | readonly string[]>;
  return `${argument} matches ${typeof matches === 'string' ? matches : matches.join(' | ')}${root === undefined ? '' : ` under ${root}`}`;
}
