// Where the bundled example lives: beside the package when installed, at the repo root in a checkout.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

const candidates = [new URL('../../examples/', import.meta.url), new URL('../../../../examples/', import.meta.url)];

export function examplesDir(): string {
  for (const candidate of candidates) {
    const dir = fileURLToPath(candidate);
    if (existsSync(`${dir}transcript.json`)) return dir;
  }
  throw new Error('the bundled example is missing from this installation');
}
