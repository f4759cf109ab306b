// Reads a transcript from a file or standard input, as JSON, with errors a person can act on.
import { createReadStream, fstatSync } from 'node:fs';
import { roundedIntegers, type ToolCallRequest } from '@airlock/core';
import { roundedIntegerIn, roundedIntegerWords } from './rounded-integers.js';
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
  const bytes = Buffer.concat(chunks);
  try {
    // Not replaced with U+FFFD without a word: an argument would reach its tool changed.
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new UsageError(`${label}: is not valid UTF-8 text${firstInvalidByte(bytes)}`);
  }
}

/** Where the first byte that is not UTF-8 is, for the message. */
function firstInvalidByte(bytes: Buffer): string {
  let low = 0;
  let high = bytes.length;
  const decoder = new TextDecoder('utf-8', { fatal: true });
  // The longest valid prefix, found by halving (a prefix cut inside a character may fail too: then look shorter).
  while (low < high) {
    const middle = Math.ceil((low + high) / 2);
    try {
      decoder.decode(bytes.subarray(0, middle));
      low = middle;
    } catch {
      high = middle - 1;
    }
  }
  return ` (near byte ${low})`;
}

/** The parsed input, and the integers in its text JSON.parse rounded (by what each became), for the caller to refuse where they matter. */
export interface JsonInput {
  readonly value: unknown;
  readonly rounded: ReadonlyMap<number, string>;
}

export async function readJsonInput(source: string): Promise<JsonInput> {
  const label = source === '-' ? 'standard input' : source;
  let text: string;
  try {
    // A folder redirected in (`< dir`) reads as empty on stdin: said as for a folder named.
    if (source === '-' && fstatSync(0).isDirectory()) throw Object.assign(new Error('EISDIR'), { code: 'EISDIR' });
    text = source === '-' ? await readBounded(process.stdin as AsyncIterable<Buffer>, label) : await readBounded(createReadStream(source), label);
  } catch (error) {
    if (UsageError.isInstance(error)) throw error;
    const code = (error as NodeJS.ErrnoException).code;
    throw new UsageError(code === 'ENOENT' ? `${label}: no such file` : code === 'EISDIR' ? `${label}: is a folder, not a transcript file` : `${label}: cannot be read (${code ?? 'error'})`);
  }
  if (text.trim() === '') throw new UsageError(`${label}: is empty (expected a JSON transcript)`);
  let value: unknown;
  try {
    // Editors on some systems start UTF-8 files with a byte-order mark: not part of the JSON.
    value = JSON.parse(text.startsWith('\ufeff') ? text.slice(1) : text) as unknown;
  } catch (error) {
    throw new UsageError(`${label}: not valid JSON (${(error as Error).message})`);
  }
  return { value, rounded: roundedIntegers(text) };
}

/**
 * Refuses the input when a call about to run has decoded arguments (Anthropic `input`, Gemini
 * `args`) holding an integer JSON.parse rounded: the tool would get the rounded number with no
 * word said, and the pipeline's own check reads argument text, which these never were. Such an
 * integer elsewhere (an earlier turn, a tool result) harms nothing and is let be.
 */
export function refuseRoundedArguments(calls: readonly ToolCallRequest[], rounded: ReadonlyMap<number, string>, label: string): void {
  for (const call of calls) {
    if (typeof call.arguments === 'string') continue; // checked by the pipeline, as text
    const found = roundedIntegerIn(call.arguments, rounded);
    if (found !== undefined) throw new UsageError(`${label}: call ${JSON.stringify(call.id)} holds ${roundedIntegerWords(found)}`);
  }
}

/** Where each format keeps a call's id, as a person finds it in the transcript. */
const ID_PATHS: Readonly<Record<string, (index: number) => string>> = {
  openai: (index) => `tool_calls[${index}].id`,
  responses: (index) => `function_call[${index}].call_id`,
  anthropic: (index) => `tool_use[${index}].id`,
  gemini: (index) => `functionCall[${index}].id`,
};

/**
 * A transcript is the user's input, so a call without an id is bad input here (exit 2), not
 * a call answered under a stand-in as the engine answers a model's: the tool messages printed
 * would match no call of the transcript.
 */
export function refuseCallsWithoutIds(calls: readonly ToolCallRequest[], provider: string, label: string): void {
  calls.forEach((call, index) => {
    const id: unknown = call.id;
    const problem = id === undefined || id === null ? 'is missing' : typeof id !== 'string' ? 'must be a string' : id === '' ? 'is empty' : undefined;
    if (problem !== undefined) throw new UsageError(`${label}: ${(ID_PATHS[provider] ?? ((at: number) => `call ${at}'s id`))(index)} ${problem}: every call needs an id to be answered under`);
  });
}
