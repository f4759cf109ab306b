// The manifest's permissions as core policy rules: a decision per tool (its own entry, else
// the manifest's default), then the manifest's rules, each scoped to this plugin's own tools.
import { toolNameMatcher, type PolicyRule } from '@airlock/core';
import type { LoadedPlugin } from './loaded-plugin.js';

export function pluginPolicyRules(plugin: LoadedPlugin): PolicyRule[] {
  const permissions = plugin.manifest.permissions;
  const names = plugin.tools.map((tool) => tool.name);
  const rules: PolicyRule[] = names.map((name) => {
    // Own keys only: a tool named "constructor" or "toString" must not read Object.prototype.
    const own = permissions?.tools !== undefined && Object.hasOwn(permissions.tools, name) ? permissions.tools[name] : undefined;
    return {
      tool: name,
      decision: own ?? permissions?.default ?? 'allow',
      reason: `${own !== undefined ? `permissions.tools.${name}` : 'permissions.default'} in the ${plugin.name} plugin's manifest`,
    };
  });
  for (const rule of permissions?.rules ?? []) {
    // A manifest can only speak for its own plugin's tools.
    const matches = toolNameMatcher(rule.tool);
    // One argument on purpose: filter also passes the index, which picomatch would read as an option.
    const scoped = names.filter((name) => matches(name));
    if (scoped.length === 0) continue;
    rules.push({ tool: scoped, decision: rule.decision, ...(rule.when === undefined ? {} : { when: rule.when }), reason: rule.reason ?? `a rule in the ${plugin.name} plugin's manifest` });
  }
  return rules;
}
