// Copies the bundled example (the repository's examples/plugins, examples/transcript.json and
// examples/code-mode-transcript.json)
// into this package, so `airlock run` with no arguments works once the package is installed.
// Runs on every build, so the copy is never older than the source.
import { cp, rm } from 'node:fs/promises';

const source = new URL('../../../examples/', import.meta.url);
const target = new URL('../examples/', import.meta.url);

await rm(target, { recursive: true, force: true });
await cp(new URL('plugins/', source), new URL('plugins/', target), { recursive: true });
await cp(new URL('transcript.json', source), new URL('transcript.json', target));
await cp(new URL('code-mode-transcript.json', source), new URL('code-mode-transcript.json', target));
