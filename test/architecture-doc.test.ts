// docs/architecture.md maps each room to its concept and must match the tree: every folder
// under packages/*/src has a row in its table, no row names a folder that is gone, and
// every source file it names by path exists.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
const doc = readFileSync(join(root, 'docs/architecture.md'), 'utf8');

function folders(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [join(dir, entry.name), ...folders(join(dir, entry.name))]);
}

const packages = readdirSync(join(root, 'packages')).filter((name) => existsSync(join(root, 'packages', name, 'src')));
const tree = packages.flatMap((name) => {
  const src = join(root, 'packages', name, 'src');
  return [src, ...folders(src)].map((dir) => `${relative(root, dir).split('\\').join('/')}/`);
});
const rows = [...doc.matchAll(/^\| `(packages\/[^`]+\/)` \|/gm)].map((match) => match[1]!);

describe('docs/architecture.md', () => {
  it('has a row for every folder under packages/*/src', () => {
    expect(tree.filter((dir) => !rows.includes(dir))).toEqual([]);
  });

  it('has no row for a folder that does not exist, and no row twice', () => {
    expect(rows.filter((dir) => !tree.includes(dir))).toEqual([]);
    expect(new Set(rows).size).toBe(rows.length);
  });

  it('names only source files that exist', () => {
    // `folder/file.ts` as the text writes it: relative to a package's src/ (or the package, or the root).
    const paths = [...new Set([...doc.matchAll(/`((?:[a-z-]+\/)+[a-z-]+\.ts)`/g)].map((match) => match[1]!))];
    const bases = [root, ...packages.flatMap((name) => [join(root, 'packages', name), join(root, 'packages', name, 'src')])];
    expect(paths.filter((path) => !bases.some((base) => existsSync(join(base, path))))).toEqual([]);
    // A bare `file.ts` must be some source file's name.
    const files = new Set(tree.flatMap((dir) => readdirSync(join(root, dir))));
    const bare = [...new Set([...doc.matchAll(/`([a-z-]+\.ts)`/g)].map((match) => match[1]!))];
    expect(bare.filter((name) => !files.has(name))).toEqual([]);
  });
});
