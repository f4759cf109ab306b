// The TypeScript the code tool's description carries: one typed async function per tool
// the caller may use, under `tools`, so the model writes typed calls.
import type { JsonSchema } from '../json/json-types.js';
import { docComment, propertyKey, schemaToTypeScript } from './schema-to-typescript.js';

export interface DeclaredTool {
  readonly name: string;
  readonly description: string;
  readonly parameters: JsonSchema;
  /** The tool's declared result schema, when it has one; otherwise the result is `unknown`. */
  readonly output?: JsonSchema | undefined;
}

/** `declare const tools: { ... }` for these tools, plus the error a failed call rejects with. */
export function codeModeDeclarations(tools: readonly DeclaredTool[]): string {
  let text = 'interface ToolError extends Error {\n  /** A stable code: the result code of the call (INVALID_ARGS, PERMISSION_DENIED, TIMEOUT, ...), or TOO_MANY_CALLS when the caps of this program refused it unrun */\n  code: string;\n}\n\ndeclare const tools: {\n';
  for (const tool of tools) {
    text += docComment(tool.description, '  ');
    text += `  ${propertyKey(tool.name)}(args: ${schemaToTypeScript(tool.parameters, '  ')}): Promise<${schemaToTypeScript(tool.output, '  ')}>;\n`;
  }
  return `${text}};\n`;
}
