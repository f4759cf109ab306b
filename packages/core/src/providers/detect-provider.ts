// Finds the tool calls to run in whatever a user saved from a provider, and which
// provider wrote them. Accepted: one assistant message (or a single Responses
// `function_call` item); an array of messages or of Responses items;
// `{ messages: [...] }`; Gemini's `{ contents: [...] }`; a raw API response (`choices`,
// `output`, `candidates`).
// From a conversation, the last assistant turn runs: those of its calls no tool reply answers yet.
import { AirlockError } from '../errors/airlock-error.js';
import { unansweredCalls } from './openai-responses.js';
import { isRecord } from './provider-format.js';

/** What the error says is accepted, so a person can fix their input from one line. */
const ACCEPTED_INPUTS =
  'accepted: an assistant message with OpenAI "tool_calls", Anthropic "tool_use" blocks or Gemini "functionCall" parts; ' +
  'OpenAI Responses "function_call" items (one, or an array); an array of messages; { "messages": [...] }; { "contents": [...] }; ' +
  'or a raw API response ({ "choices": [...] }, { "output": [...] }, { "candidates": [...] })';

function notToolCalls(detail: string, withShapes = false): AirlockError {
  return new AirlockError('INVALID_PROVIDER_MESSAGE', `not a tool-call message: ${detail}${withShapes ? ` (${ACCEPTED_INPUTS})` : ''}`);
}

export interface DetectedMessage {
  readonly provider: 'openai' | 'anthropic' | 'responses' | 'gemini';
  /** What that provider's `parseCalls` takes: a message, or for Responses the list of items. */
  readonly message: unknown;
}

const isFunctionCallItem = (item: unknown): boolean => isRecord(item) && item.type === 'function_call';

const FORMAT_NAMES = { openai: 'OpenAI "tool_calls"', anthropic: 'Anthropic "tool_use" blocks', gemini: 'Gemini "functionCall" parts' } as const;

function detectOne(message: unknown): DetectedMessage['provider'] | undefined {
  if (!isRecord(message)) return undefined;
  const found: (keyof typeof FORMAT_NAMES)[] = [];
  // An empty tool_calls list (some clients always send one) holds no calls: nothing to run.
  if (Array.isArray(message.tool_calls) && message.tool_calls.length > 0) found.push('openai');
  if (Array.isArray(message.content) && message.content.some((block) => isRecord(block) && block.type === 'tool_use')) found.push('anthropic');
  if (Array.isArray(message.parts) && message.parts.some((part) => isRecord(part) && isRecord(part.functionCall))) found.push('gemini');
  // Running one format's calls and not the other's would drop calls without a word.
  if (found.length > 1) throw notToolCalls(`the message holds ${found.map((format) => FORMAT_NAMES[format]).join(' and ')}: which calls to run is not clear`);
  return found[0];
}

function isAssistant(message: unknown): boolean {
  return isRecord(message) && (message.role === 'assistant' || message.role === 'model');
}

/** A reply to tool calls: OpenAI's role "tool", Anthropic's "tool_result" blocks, Gemini's "functionResponse" parts. */
function isToolReply(message: unknown): boolean {
  if (!isRecord(message)) return false;
  if (message.role === 'tool') return true;
  if (Array.isArray(message.content) && message.content.some((block) => isRecord(block) && block.type === 'tool_result')) return true;
  return Array.isArray(message.parts) && message.parts.some((part) => isRecord(part) && isRecord(part.functionResponse));
}

/**
 * A Responses conversation is flat: the last turn is what follows the last user, system or
 * developer message, the model's calls and their outputs interleaved. Its calls without an
 * output run (the provider's parseCalls drops the answered ones); a turn whose calls all
 * have outputs has nothing left to run.
 */
function lastResponsesTurn(items: readonly unknown[], where: string): DetectedMessage {
  let start = 0;
  items.forEach((item, index) => {
    if (isRecord(item) && (item.role === 'user' || item.role === 'system' || item.role === 'developer')) start = index + 1;
  });
  const turn = items.slice(start);
  if (unansweredCalls(turn).length === 0) {
    throw notToolCalls(turn.some(isFunctionCallItem) ? `every "function_call" of the last turn of ${where} already has a "function_call_output": nothing is left to run` : `the last turn of ${where} has no "function_call" items`);
  }
  return { provider: 'responses', message: turn };
}

/** The ids the tool replies after the last assistant message answer (OpenAI "tool_call_id", Anthropic "tool_use_id", Gemini "functionResponse.id"). */
function repliedIds(replies: readonly unknown[]): Set<unknown> {
  const ids = new Set<unknown>();
  for (const reply of replies) {
    if (!isRecord(reply)) continue;
    if (reply.role === 'tool') ids.add(reply.tool_call_id);
    if (Array.isArray(reply.content)) for (const block of reply.content) if (isRecord(block) && block.type === 'tool_result') ids.add(block.tool_use_id);
    if (Array.isArray(reply.parts)) for (const part of reply.parts) if (isRecord(part) && isRecord(part.functionResponse)) ids.add(part.functionResponse.id);
  }
  return ids;
}

/** A copy of `message` with `key` holding `value` (the provider's parser reads the rest as it was). */
function replacing(message: Record<string, unknown>, key: string, value: unknown): Record<string, unknown> {
  return Object.fromEntries(Object.entries(message).map(([name, field]) => [name, name === key ? value : field]));
}

/**
 * The last assistant message with only its calls that no reply answers, or undefined when
 * every call has one. A Gemini call without an id cannot be matched to its reply: refused.
 */
function unansweredPart(message: Record<string, unknown>, provider: DetectedMessage['provider'], replied: Set<unknown>, where: string): Record<string, unknown> | undefined {
  const waiting = (id: unknown): boolean => typeof id !== 'string' || id === '' || !replied.has(id);
  if (provider === 'openai') {
    const calls = (message.tool_calls as unknown[]).filter((call) => !isRecord(call) || waiting(call.id));
    return calls.length === 0 ? undefined : replacing(message, 'tool_calls', calls);
  }
  if (provider === 'anthropic') {
    const content = message.content as unknown[];
    const calls = content.filter((block) => isRecord(block) && block.type === 'tool_use');
    if (!calls.some((block) => waiting((block as Record<string, unknown>).id))) return undefined;
    return replacing(message, 'content', content.filter((block) => !isRecord(block) || block.type !== 'tool_use' || waiting(block.id)));
  }
  const parts = message.parts as unknown[];
  const calls = parts.filter((part) => isRecord(part) && isRecord(part.functionCall));
  const ids = calls.map((part) => ((part as Record<string, Record<string, unknown>>).functionCall as Record<string, unknown>).id);
  if (ids.some((id) => typeof id !== 'string' || id === '')) {
    throw notToolCalls(`the last model message in ${where} has replies after it, and calls without an "id" cannot be told answered or not: remove the replies to run the whole message again, or the answered calls to run the rest`);
  }
  if (!ids.some(waiting)) return undefined;
  return replacing(message, 'parts', parts.filter((part) => !isRecord(part) || !isRecord(part.functionCall) || waiting(part.functionCall.id)));
}

function fromList(list: readonly unknown[], where: string): DetectedMessage {
  if (list.length === 0) throw notToolCalls(`${where} is empty`, true);
  if (list.some(isFunctionCallItem)) {
    // Running the Responses items would drop the other format's calls without a word.
    if (list.some((item) => !isFunctionCallItem(item) && detectOne(item) !== undefined)) throw notToolCalls(`${where} mixes Responses "function_call" items with messages holding tool calls: which calls to run is not clear`);
    return lastResponsesTurn(list, where);
  }
  const lastIndex = list.findLastIndex(isAssistant);
  const lastAssistant: unknown = list[lastIndex];
  if (lastAssistant === undefined) throw notToolCalls(`${where} has no assistant message (role "assistant" or "model")`, true);
  const provider = detectOne(lastAssistant);
  if (provider === undefined) throw notToolCalls('the last assistant message has no tool calls');
  // A saved conversation whose last turn was answered, in whole or in part: running an
  // answered call again would repeat what it did, so only the calls without a reply run.
  const replies = list.slice(lastIndex + 1).filter(isToolReply);
  if (replies.length === 0) return { provider, message: lastAssistant };
  const rest = unansweredPart(lastAssistant as Record<string, unknown>, provider, repliedIds(replies), where);
  if (rest === undefined) throw notToolCalls(`every call of the last assistant message in ${where} already has a tool reply after it: nothing is left to run`);
  return { provider, message: rest };
}

function fromMessage(message: Record<string, unknown>, where: string): DetectedMessage {
  // A message of the user's, or a tool reply, holds no calls of the model's to run.
  if (message.role !== undefined && !isAssistant(message)) {
    throw notToolCalls(`${where} has role ${JSON.stringify(String(message.role)).slice(0, 40)}: only an assistant message (role "assistant" or "model") holds the model's calls`);
  }
  const provider = detectOne(message);
  if (provider !== undefined) return { provider, message };
  if (isAssistant(message)) throw notToolCalls(`${where} has no tool calls`);
  throw notToolCalls(`found neither OpenAI "tool_calls", Anthropic "tool_use", Responses "function_call" nor Gemini "functionCall"`, true);
}

/** The shapes an object could be read as: more than one, and reading one would drop the others' calls. */
const SHAPES: readonly [string, (input: Record<string, unknown>) => boolean][] = [
  ['a Responses "function_call" item', (input) => input.type === 'function_call'],
  ['"messages"', (input) => Array.isArray(input.messages)],
  ['"contents"', (input) => Array.isArray(input.contents)],
  ['"choices"', (input) => Array.isArray(input.choices)],
  ['"output"', (input) => Array.isArray(input.output)],
  ['"candidates"', (input) => Array.isArray(input.candidates)],
  ['tool calls of its own', (input) => detectOne(input) !== undefined],
];

export function detectToolCallMessage(input: unknown): DetectedMessage {
  if (Array.isArray(input)) return fromList(input, 'the array');
  if (!isRecord(input)) throw notToolCalls(`expected a JSON object or array, got ${input === null ? 'null' : typeof input}`, true);
  const shapes = SHAPES.filter(([, is]) => is(input)).map(([name]) => name);
  if (shapes.length > 1) throw notToolCalls(`the input is both ${shapes.join(' and ')}: which calls to run is not clear`);
  if (input.type === 'function_call') return { provider: 'responses', message: [input] };
  if (Array.isArray(input.messages)) return fromList(input.messages, '"messages"');
  // A Gemini request body (generateContent), as a Gemini user saves a conversation.
  if (Array.isArray(input.contents)) return fromList(input.contents, '"contents"');
  // Raw API responses: Chat Completions, Responses, Gemini generateContent.
  if (Array.isArray(input.choices)) {
    // Running the first of several would drop the others' calls without a word.
    if (input.choices.length > 1) throw notToolCalls(`the response has ${input.choices.length} choices: save the one to run (its "message")`);
    const choice: unknown = input.choices[0];
    if (!isRecord(choice) || !isRecord(choice.message)) throw notToolCalls('choices[0].message is missing');
    return fromMessage(choice.message, 'choices[0].message');
  }
  if (Array.isArray(input.output)) {
    const items = input.output;
    if (!items.some(isFunctionCallItem)) throw notToolCalls('the response\'s "output" has no "function_call" items');
    return lastResponsesTurn(items, '"output"');
  }
  if (Array.isArray(input.candidates)) {
    if (input.candidates.length > 1) throw notToolCalls(`the response has ${input.candidates.length} candidates: save the one to run (its "content")`);
    const candidate: unknown = input.candidates[0];
    if (!isRecord(candidate) || !isRecord(candidate.content)) throw notToolCalls('candidates[0].content is missing');
    return fromMessage(candidate.content, 'candidates[0].content');
  }
  return fromMessage(input, 'the message');
}
