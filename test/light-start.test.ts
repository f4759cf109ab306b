// A sandbox process, and each worker thread of its pool, starts with what it runs and no
// more: a call whose shard or worker is not up yet waits for that start. @airlock/core
// (ajv, zod, re2js, picomatch) took about 120 ms of every such start, per process and per
// thread, for two small helpers; the built code both load must not reach it again.
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from './support/run-cli.js';

const DIST = `${ROOT}packages/sandbox/dist`;
/** What these entries may load from outside the package: Node's own modules, the pool and the isolate library. */
const ALLOWED = /^(node:|piscina$|isolated-vm)/;

/** Every module a built file loads at start (its static imports, followed), and the packages among them. */
function startGraph(entry: string): { files: string[]; packages: string[] } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string): void => {
    if (files.has(file)) return;
    files.add(file);
    const source = readFileSync(file, 'utf8');
    // `import type` is erased; any other import or re-export loads its module, `import {} from` included.
    for (const match of source.matchAll(/^(?:import|export)\s+(?!type\s)(?:[^'";]*?\sfrom\s+)?['"]([^'"]+)['"]/gm)) {
      const specifier = match[1] as string;
      if (specifier.startsWith('.')) visit(resolve(dirname(file), specifier));
      else packages.add(specifier);
    }
  };
  visit(resolve(DIST, entry));
  return { files: [...files], packages: [...packages] };
}

describe('what a sandbox process and its pool workers load at start', () => {
  it.each([['host/child-main.js'], ['worker/pool-worker.js']])('%s loads Node, Piscina and isolated-vm only', (entry) => {
    const { files, packages } = startGraph(entry);
    expect(files.length).toBeGreaterThan(5); // the walk followed the entry's own imports
    expect(packages.filter((name) => !ALLOWED.test(name))).toEqual([]);
  });
});
