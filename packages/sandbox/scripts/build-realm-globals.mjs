// Bundles the realm's standard helpers (src/realm-globals) into one classic script,
// dist/isolate/realm-globals.js, which the host compiles once per isolate and runs in
// every new realm. Its shape keeps a new realm cheap:
//
//   (function () {
//     var __airlockParts = [function (__airlockShared) { var Object = __airlockShared.Object, ...; ...text...; return part; }, ...url, base64, clone, random];
//     ...install.ts: capture intrinsics, define lazy accessors on globalThis...
//   })();
//
// Only install.ts runs per realm. Each part (text, url, base64, clone, random) is its own
// bundle inside a function that runs the first time a plugin reads one of its globals;
// V8 compiles it then, once per isolate. Parts receive the intrinsics install.ts captured
// (captured.ts is injected into them), and their libraries see `airlockLibraryGlobal`,
// not the realm's globalThis.
import { build } from 'esbuild';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const source = join(root, 'src', 'realm-globals');
const outfile = join(root, 'dist', 'isolate', 'realm-globals.js');
// In the order of install.ts's PART_INDEX.
const PARTS = ['text', 'url', 'base64', 'clone', 'random'];
// Declared as variables around each part, from the captured record: every free reference
// to them inside the part, library code and esbuild's helpers alike, is the captured value.
const CONSTRUCTORS = JSON.parse(await readFile(join(source, 'constructor-names.json'), 'utf8'));

// whatwg-url's dependencies, resolved from whatwg-url itself (pnpm keeps them out of our reach).
const fromWhatwgUrl = createRequire(createRequire(join(root, 'package.json')).resolve('whatwg-url'));
const tr46 = fromWhatwgUrl.resolve('tr46');

// What the bundle replaces inside whatwg-url (each replacement's file says why).
const replacements = {
  name: 'airlock-realm-replacements',
  setup(builder) {
    const inWhatwgUrl = (importer) => importer.includes('/whatwg-url/');
    builder.onResolve({ filter: /^\.\/encoding(\.js)?$/ }, (args) => (inWhatwgUrl(args.importer) ? { path: join(source, 'url-encoding.ts') } : undefined));
    builder.onResolve({ filter: /^@exodus\/bytes\/encoding\.js$/ }, (args) => (inWhatwgUrl(args.importer) ? { path: join(source, 'no-legacy-encodings.ts') } : undefined));
    builder.onResolve({ filter: /^tr46$/ }, (args) => (inWhatwgUrl(args.importer) ? { path: join(source, 'tr46-lazy.ts') } : undefined));
    builder.onResolve({ filter: /^airlock-real-tr46$/ }, () => ({ path: tr46 }));
    // A JSON table as a string parsed on first use: far cheaper to compile than the same data as an object literal.
    builder.onLoad({ filter: /\.json$/ }, async (args) => ({ contents: `module.exports = JSON.parse(${JSON.stringify(JSON.stringify(JSON.parse(await readFile(args.path, 'utf8'))))});`, loader: 'js' }));
  },
};

const common = {
  bundle: true,
  write: false,
  format: 'iife',
  platform: 'neutral',
  mainFields: ['module', 'main'],
  target: 'es2022',
  minify: true,
  legalComments: 'none',
  logLevel: 'warning',
};

async function bundlePart(name) {
  const result = await build({
    ...common,
    entryPoints: [join(source, `${name}.ts`)],
    globalName: 'airlockPart',
    inject: [join(source, 'captured.ts')],
    define: { globalThis: 'airlockLibraryGlobal', self: 'airlockLibraryGlobal', window: 'airlockLibraryGlobal', global: 'airlockLibraryGlobal', structuredClone: 'undefined' },
    plugins: [replacements],
  });
  return `function (__airlockShared) {\nvar ${CONSTRUCTORS.map((name) => `${name} = __airlockShared.${name}`).join(', ')};\n${result.outputFiles[0].text}return airlockPart;\n}`;
}

const parts = await Promise.all(PARTS.map(bundlePart));
const install = await build({ ...common, entryPoints: [join(source, 'install.ts')] });
const text = `(function () {\n"use strict";\nvar __airlockParts = [\n${parts.join(',\n')}\n];\n${install.outputFiles[0].text}})();\n`;
await mkdir(dirname(outfile), { recursive: true });
await writeFile(outfile, text);
process.stdout.write(`realm globals: ${outfile} (${Math.round(text.length / 1024)} KiB)\n`);
