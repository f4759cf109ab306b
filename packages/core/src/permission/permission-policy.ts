// The permission gate's policy: rules matched on tool name (and optionally argument
// values), decided outside every tool. Among matching rules the strictest wins, so
// rule order can never turn a denial into permission.
import picomatch from 'picomatch';
import { posix } from 'node:path';
import { AirlockError } from '../errors/airlock-error.js';
import type { JsonObject, JsonValue } from '../json/json-types.js';

export type Decision = 'allow' | 'deny' | 'ask';

export interface PolicyRule {
  /** Tool name or glob (`*`, `fs_*`); a list matches any. */
  readonly tool: string | readonly string[];
  /** Argument conditions, all of which must hold: dotted path to a glob on its string value. */
  readonly when?: Readonly<Record<string, string | readonly string[]>>;
  /** Restricts the rule to these tenants. */
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
}

const STRICTNESS: Readonly<Record<Decision, number>> = { allow: 0, ask: 1, deny: 2 };
const DECISIONS: ReadonlySet<string> = new Set(['allow', 'deny', 'ask']);

function valueAt(args: JsonObject, dottedPath: string): JsonValue | undefined {
  let current: JsonValue | undefined = args;
  for (const key of dottedPath.split('.')) {
    if (current === null || typeof current !== 'object' || Array.isArray(current)) return undefined;
    current = Object.prototype.hasOwnProperty.call(current, key) ? (current as JsonObject)[key] : undefined;
  }
  return current;
}

/** Path-like values are normalized first, so `/tmp/../etc/hosts` meets a rule on `/etc/**`. */
function normalizeForMatch(value: string): string {
  return value.startsWith('/') ? posix.normalize(value) : value;
}

interface CompiledRule {
  readonly rule: PolicyRule;
  readonly matchesTool: (name: string) => boolean;
  readonly conditions: readonly { path: string; matches: (value: string) => boolean }[];
}

function compileRule(rule: PolicyRule, index: number): CompiledRule {
  if (!DECISIONS.has(rule.decision)) {
    throw new AirlockError('INVALID_OPTION', `policy.rules[${index}].decision must be "allow", "deny" or "ask"`, { path: `policy.rules[${index}].decision` });
  }
  const globs = typeof rule.tool === 'string' ? [rule.tool] : [...rule.tool];
  if (globs.length === 0 || globs.some((glob) => typeof glob !== 'string' || glob === '')) {
    throw new AirlockError('INVALID_OPTION', `policy.rules[${index}].tool must be a non-empty name or glob`, { path: `policy.rules[${index}].tool` });
  }
  const conditions = Object.entries(rule.when ?? {}).map(([path, pattern]) => ({
    path,
    matches: picomatch(typeof pattern === 'string' ? pattern : [...pattern], { dot: true, nocase: false }),
  }));
  return { rule, matchesTool: toolNameMatcher(globs), conditions };
}

/** The tool-name matcher the policy uses (picomatch globs), for anyone scoping rules to tools. */
export function toolNameMatcher(globs: string | readonly string[]): (name: string) => boolean {
  return picomatch(typeof globs === 'string' ? globs : [...globs], { dot: true });
}

export function createPolicy(config: PolicyConfig): PermissionPolicy {
  if (!DECISIONS.has(config.default)) {
    throw new AirlockError('INVALID_OPTION', 'policy.default must be "allow", "deny" or "ask"', { path: 'policy.default' });
  }
  const rules = (config.rules ?? []).map(compileRule);
  return {
    decide(toolName, args, tenant) {
      let verdict: PolicyVerdict | undefined;
      for (const { rule, matchesTool, conditions } of rules) {
        if (!matchesTool(toolName)) continue;
        if (rule.tenants !== undefined && (tenant === undefined || !rule.tenants.includes(tenant))) continue;
        const holds = conditions.every(({ path, matches }) => {
          const value = valueAt(args, path);
          return typeof value === 'string' && matches(normalizeForMatch(value));
        });
        if (!holds) continue;
        if (verdict === undefined || STRICTNESS[rule.decision] > STRICTNESS[verdict.decision]) {
          verdict = { decision: rule.decision, reason: rule.reason ?? describeRule(rule) };
        }
      }
      return verdict ?? { decision: config.default, reason: `the policy default for "${toolName}" is ${config.default}` };
    },
  };
}

function describeRule(rule: PolicyRule): string {
  const tools = typeof rule.tool === 'string' ? rule.tool : rule.tool.join(', ');
  const when = Object.entries(rule.when ?? {}).map(([path, pattern]) => `${path} matches ${typeof pattern === 'string' ? pattern : pattern.join(' | ')}`);
  return `the policy rule "${rule.decision} ${tools}${when.length > 0 ? ` when ${when.join(' and ')}` : ''}"`;
}
