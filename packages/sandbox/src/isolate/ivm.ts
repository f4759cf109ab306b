// The isolated-vm build this Node.js runs. Installed from npm, @airlock/sandbox depends on
// "isolated-vm" by a range npm resolves per Node (5.0.4 on 20, 6.2 on 22, 7.0 on 24 and 26);
// inside this repository's workspace, one lockfile installs an alias per Node line instead
// (.pnpmfile.cjs). The API and its declarations are the same in all three.
import { createRequire } from 'node:module';
import type IsolatedVM from 'isolated-vm';

const require = createRequire(import.meta.url);

/** The workspace alias for this Node's line, bounded as in .pnpmfile.cjs. */
function workspaceAlias(nodeMajor: number): string {
  if (nodeMajor >= 24) return 'isolated-vm-node24';
  if (nodeMajor >= 22) return 'isolated-vm-node22';
  return 'isolated-vm-node20';
}

function loadIsolatedVm(): typeof IsolatedVM {
  const candidates = ['isolated-vm', workspaceAlias(Number(process.versions.node.split('.')[0]))];
  for (const name of candidates) {
    let path: string;
    try {
      path = require.resolve(name);
    } catch {
      continue; // not installed under this name; a failure to load below is a real error
    }
    return require(path) as typeof IsolatedVM;
  }
  throw new Error(
    `isolated-vm is not installed for Node ${process.versions.node}: reinstall @airlock/sandbox with this Node ` +
      '(npm picks 5.0.4 on Node 20, which compiles from source, 6.2 on 22, 7.0 on 24 and 26)',
  );
}

const ivm = loadIsolatedVm();

// The classes are also the types other modules name (`ivm.Isolate`), as with the package itself.
// eslint-disable-next-line @typescript-eslint/no-namespace
declare namespace ivm {
  export type Isolate = IsolatedVM.Isolate;
  export type Context = IsolatedVM.Context;
  export type Script = IsolatedVM.Script;
  export type Module = IsolatedVM.Module;
  export type Reference<T = unknown> = IsolatedVM.Reference<T>;
  export type Callback = IsolatedVM.Callback;
  export type ExternalCopy<T = unknown> = IsolatedVM.ExternalCopy<T>;
}

export default ivm;
