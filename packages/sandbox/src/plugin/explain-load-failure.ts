// Turns a plugin module's load failure, as it comes back from the isolate, into one
// sentence an author can act on, attributed to the module file (with line and column
// where V8 gave them). Runs on the host: the isolate only says what went wrong.
import { isBuiltin } from 'node:module';
import type { SandboxFailureCode } from '../worker/worker-protocol.js';

const GUIDE = 'see docs/plugins.md';

/** Loose signs of CommonJS: only trusted together with a load failure that fits them. */
const COMMONJS_SOURCE = /\bmodule\.exports\b|\bexports\.[A-Za-z_$][\w$]*\s*=|\brequire\s*\(/;
const COMMONJS_FAILURE = /\b(require|module|exports|__dirname|__filename) is not defined\b/;
const HAS_DEFAULT_EXPORT = /\bexport\s+default\b|\bas\s+default\b/;

function stripPrefix(message: string): string {
  return message.replace(/^(the plugin module failed to load|the sandbox failed): /, '');
}

/** `Unexpected token ';' [plugin:name:3:87]` → location "3:87" and the bare message. */
function splitLocation(message: string): { location: string; text: string } {
  const match = /\s*\[plugin:[^\]]*?:(\d+):(\d+)\]/.exec(message);
  if (match === null) return { location: '', text: message };
  return { location: `:${match[1]}:${match[2]}`, text: message.replace(match[0], '') };
}

/** Which manifest limit a load ran out of, for the plugin's author. */
const LIMIT_READ: Record<'CPU_LIMIT' | 'TIMEOUT' | 'MEMORY_LIMIT', string> = {
  CPU_LIMIT: ": the manifest's limits.cpuMs",
  TIMEOUT: ": the manifest's limits.timeoutMs, from 1 s up to 5 s",
  MEMORY_LIMIT: ": the manifest's limits.memoryMb",
};

export function explainLoadFailure(failure: { code: SandboxFailureCode; message: string }, source: string, modulePath: string): string {
  const raw = stripPrefix(failure.message);
  const { location, text } = splitLocation(raw);
  const at = `${modulePath}${location}`;
  switch (failure.code) {
    case 'CPU_LIMIT':
    case 'TIMEOUT':
    case 'MEMORY_LIMIT':
      return `${at}: loading the module ${text} (${failure.code}${LIMIT_READ[failure.code]}); a module's top level should only define its tools`;
    case 'ABORTED_BEFORE_DISPATCH':
      // Remote executors: nothing took the load, so nothing about the module is known yet.
      return `${modulePath}: not loaded: ${text}`;
    default:
      break;
  }
  const commonJsFailure = COMMONJS_FAILURE.exec(text);
  const noDefault = /default export/.test(text);
  if (commonJsFailure !== null || (noDefault && COMMONJS_SOURCE.test(source))) {
    const why = commonJsFailure === null ? 'it assigns module.exports' : `${commonJsFailure[0]} in a plugin`;
    return `${at}: plugins are ES modules; this one looks like CommonJS (${why}): end it with \`export default { tools: [...] }\` and bundle its dependencies into the file instead of require() (esbuild --bundle --format=esm; ${GUIDE})`;
  }
  if (noDefault) {
    return HAS_DEFAULT_EXPORT.test(source)
      ? `${at}: the default export is not { tools: [...] } (${GUIDE})`
      : `${at}: has no default export; a plugin module ends with \`export default { tools: [...] }\` (${GUIDE})`;
  }
  const missingImport = /import "([^"]*)" is not available/.exec(text);
  if (missingImport !== null) {
    const specifier = missingImport[1]!;
    if (isBuiltin(specifier)) {
      return `${at}: imports "${specifier}", a Node module: the sandbox has none (files and network are capabilities the operator grants; ${GUIDE})`;
    }
    return `${at}: imports "${specifier}", but a plugin is one self-contained file: bundle its dependencies in (esbuild --bundle --format=esm; ${GUIDE})`;
  }
  if (failure.code === 'TOOL_ERROR') return `${at}: could not be loaded: ${text}`;
  // Anything else is the sandbox's own failure, not the author's: keep the code for the operator.
  return `${at}: could not be loaded (${failure.code}: ${text})`;
}
