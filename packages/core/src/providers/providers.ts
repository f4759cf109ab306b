import { anthropicMessages } from './anthropic-messages.js';
import { gemini } from './gemini.js';
import { mcp } from './mcp.js';
import { openaiChat } from './openai-chat.js';
import { openaiResponses } from './openai-responses.js';
import type { ProviderFormat, ProviderId } from './provider-format.js';

export const PROVIDERS = Object.freeze({
  openai: openaiChat,
  responses: openaiResponses,
  anthropic: anthropicMessages,
  gemini,
  mcp,
} satisfies Record<ProviderId, ProviderFormat>);

/** One provider's model-facing tool entry, in that provider's own shape. */
export type ProviderTool<P extends ProviderId> = (typeof PROVIDERS)[P] extends ProviderFormat<infer Tool, unknown> ? Tool : never;
/** One provider's message that carries tool results back to the model. */
export type ProviderToolMessage<P extends ProviderId> = (typeof PROVIDERS)[P] extends ProviderFormat<unknown, infer Message> ? Message : never;

export const PROVIDER_IDS = Object.keys(PROVIDERS) as ProviderId[];
