// Reads a transcript from a file or standard input, as JSON, with errors a person can act on.
import { createReadStream } from 'node:fs';
import { firstRoundedInteger } from '@airlock/core';
import { UsageError } from './usage-error.js';

const MAX_INPUT_BYTES = 64 * 1024 * 1024;

/** Reads a stream up to MAX_INPUT_BYTES: a file may be a device or a FIFO with no size to check first (/dev/zero). */
async function readBounded(stream: AsyncIterable<Buffer>, label: string): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    size += chunk.length;
    if (size > MAX_INPUT_BYTES) throw new UsageError(`${label} is larger than ${MAX_INPUT_BYTES} bytes`);
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readJsonInput(source: string): Promise<unknown> {
  const label = source === '-' ? 'standard input' : source;
  let text: string;
  try {
    text = source === '-' ? await readBounded(process.stdin as AsyncIterable<Buffer>, label) : await readBounded(createReadStream(source), label);
  } catch (error) {
    if (UsageError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `${label}: no such file` : code === 'EISDIR' ? `${label}: is a folder, not a transcript file` : `${label}: cannot be read (${code ?? 'error'})`);
  }
  if (text.trim() === '') throw new UsageError(`${label}: is empty (expected a JSON transcript)`);
  // A tool would get the rounded number with no word said (the check on argument text never
  // sees an input that is already an object): refused here, where the text still says it.
  const rounded = firstRoundedInteger(text);
  if (rounded !== undefined) throw new UsageError(`${label}: holds the integer ${rounded.literal.length > 40 ? `${rounded.literal.slice(0, 40)}…` : rounded.literal}, which JSON cannot carry exactly (it would become ${rounded.becomes}); send it as a string`);
  try {
    // Editors on some systems start UTF-8 files with a byte-order mark: not part of the JSON.
    return JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text) as unknown;
  } catch (error) {
    throw new UsageError(`${label}: not valid JSON (${(error as Error).message})`);
  }
}
