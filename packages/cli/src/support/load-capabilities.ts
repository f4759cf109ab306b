// --capabilities <module>: the operator's own host functions, offered to plugins by name.
// This is trusted code (it runs in this process, not in a sandbox), like a config file.
import type { Capability } from '@airlock/sandbox';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { UsageError } from './usage-error.js';

export async function loadCapabilities(path: string | undefined): Promise<Record<string, Capability> | undefined> {
  if (path === undefined) return undefined;
  let module: { default?: unknown };
  try {
    module = (await import(pathToFileURL(resolve(path)).href)) as { default?: unknown };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(`--capabilities ${path}: ${code === 'ERR_MODULE_NOT_FOUND' ? 'no such module' : `cannot be loaded (${(error as Error).message})`}`);
  }
  const exported = module.default;
  if (typeof exported !== 'object' || exported === null || Array.isArray(exported)) {
    throw new UsageError(`--capabilities ${path}: the default export must be an object of named functions, e.g. { 'kv.get': (arg, ctx) => ... }`);
  }
  for (const [name, value] of Object.entries(exported)) {
    if (typeof value !== 'function') throw new UsageError(`--capabilities ${path}: "${name}" must be a function`);
  }
  return exported as Record<string, Capability>;
}
