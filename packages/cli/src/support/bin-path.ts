// Where this installation's binary is, for examples a person pastes into other tools'
// configuration: `npx airlock` would fetch an unrelated public package of that name.
import { fileURLToPath } from 'node:url';

export const BIN_PATH = fileURLToPath(new URL('../bin.js', import.meta.url));

/** `node /abs/path/bin.js <args>` as a JSON MCP-client server entry. */
export function mcpServerEntry(args: readonly string[]): string {
  return JSON.stringify({ command: 'node', args: [BIN_PATH, ...args] });
}
