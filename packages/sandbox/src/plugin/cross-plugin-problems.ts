// Problems between plugins loaded together: a shared plugin name or a tool name exposed
// twice would make tools, permission reasons and reports ambiguous, so both are refused.
export interface PluginIdentity {
  readonly name: string | undefined;
  readonly dir: string;
  readonly tools: readonly string[];
}

export function crossPluginProblems(plugins: readonly PluginIdentity[]): string[] {
  const problems: string[] = [];
  const named = new Map<string, string>();
  const owner = new Map<string, string>();
  for (const plugin of plugins) {
    if (plugin.name !== undefined) {
      const first = named.get(plugin.name);
      if (first !== undefined) problems.push(`two plugins are named "${plugin.name}": ${first} and ${plugin.dir}`);
      else named.set(plugin.name, plugin.dir);
    }
    for (const tool of plugin.tools) {
      const first = owner.get(tool);
      if (first !== undefined) problems.push(`tool "${tool}" is exposed by both ${first} and ${plugin.dir}`);
      else owner.set(tool, plugin.dir);
    }
  }
  return problems;
}
