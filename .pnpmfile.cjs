/* global module */
// One lockfile serves every Node.js line this repository is tested on, but each line needs
// its own isolated-vm build: 5.0.4 (compiled from source) on Node 20, 6.2.0 (prebuilt) on 22,
// 7.0.1 (prebuilt) on 24 and 26. A published @airlock/sandbox asks for
// "isolated-vm": "5.0.4 || ^6.2.0 || ^7.0.1" and npm picks the build whose engines match.
// A lockfile pins one version per name, so inside this workspace the sandbox instead gets
// one npm alias per Node line as an optional dependency, each bounded to its line, and pnpm
// installs (and builds) only the one this Node can run. packages/sandbox/src/isolate/ivm.ts
// loads whichever is present. pnpm pack ignores this file: the tarball keeps the range.
const ISOLATED_VM_LINES = {
  'isolated-vm-node20': { version: '5.0.4', node: '>=20 <22' },
  'isolated-vm-node22': { version: '6.2.0', node: '>=22 <24' },
  'isolated-vm-node24': { version: '7.0.1', node: '>=24' },
};

function readPackage(pkg) {
  if (pkg.name === '@airlock/sandbox' && pkg.dependencies?.['isolated-vm']) {
    delete pkg.dependencies['isolated-vm'];
    // pnpm 10 skips node-gyp-build on Node 24+ when the skipped 6.2.0 is walked before
    // 7.0.1, which needs it: a direct dependency keeps it installed.
    pkg.dependencies['node-gyp-build'] = '^4.8.4';
    pkg.optionalDependencies = { ...pkg.optionalDependencies };
    for (const [alias, line] of Object.entries(ISOLATED_VM_LINES)) {
      pkg.optionalDependencies[alias] = `npm:isolated-vm@${line.version}`;
    }
  }
  if (pkg.name === 'isolated-vm') {
    // The published engines have no upper bound; pnpm skips an optional dependency whose
    // engines this Node does not satisfy, so bound each build to its line.
    const line = Object.values(ISOLATED_VM_LINES).find((candidate) => candidate.version === pkg.version);
    if (line) pkg.engines = { ...pkg.engines, node: line.node };
  }
  return pkg;
}

module.exports = { hooks: { readPackage } };
