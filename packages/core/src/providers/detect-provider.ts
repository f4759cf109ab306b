// Finds the tool-call message in a transcript and which provider wrote it:
// one message, an array of messages, or `{ messages: [...] }` (the last assistant message runs).
import { AirlockError } from '../errors/airlock-error.js';
import { isRecord } from './provider-format.js';

function notToolCalls(detail: string): AirlockError {
  return new AirlockError('INVALID_PROVIDER_MESSAGE', `not a tool-call message: ${detail}`);
}

export interface DetectedMessage {
  readonly provider: 'openai' | 'anthropic' | 'responses' | 'gemini';
  readonly message: unknown;
}

function detectOne(message: unknown): DetectedMessage['provider'] | undefined {
  if (!isRecord(message)) return undefined;
  if (Array.isArray(message.tool_calls)) return 'openai';
  if (Array.isArray(message.content) && message.content.some((block) => isRecord(block) && block.type === 'tool_use')) return 'anthropic';
  if (Array.isArray(message.output) && message.output.some((item) => isRecord(item) && item.type === 'function_call')) return 'responses';
  if (Array.isArray(message.parts) && message.parts.some((part) => isRecord(part) && isRecord(part.functionCall))) return 'gemini';
  return undefined;
}

function isAssistant(message: unknown): boolean {
  return isRecord(message) && (message.role === 'assistant' || message.role === 'model');
}

export function detectToolCallMessage(input: unknown): DetectedMessage {
  const list = Array.isArray(input) ? input : isRecord(input) && Array.isArray(input.messages) ? input.messages : undefined;
  if (list === undefined) {
    const provider = detectOne(input);
    if (provider === undefined) throw notToolCalls('found neither OpenAI "tool_calls", Anthropic "tool_use", Responses "function_call" nor Gemini "functionCall"');
    return { provider, message: input };
  }
  const lastAssistant = list.findLast(isAssistant);
  if (lastAssistant === undefined) throw notToolCalls('the transcript has no assistant message');
  const provider = detectOne(lastAssistant);
  if (provider === undefined) throw notToolCalls('the last assistant message has no tool calls');
  return { provider, message: lastAssistant };
}
