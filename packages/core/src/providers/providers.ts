import { anthropicMessages } from './anthropic-messages.js';
import { gemini } from './gemini.js';
import { mcp } from './mcp.js';
import { openaiChat } from './openai-chat.js';
import { openaiResponses } from './openai-responses.js';
import type { ProviderFormat, ProviderId } from './provider-format.js';

export const PROVIDERS: Readonly<Record<ProviderId, ProviderFormat>> = Object.freeze({
  openai: openaiChat,
  responses: openaiResponses,
  anthropic: anthropicMessages,
  gemini,
  mcp,
});

export const PROVIDER_IDS = Object.keys(PROVIDERS) as ProviderId[];
