// The ids of one MCP session's client requests still in progress. MCP forbids reusing an
// id in a session, and the SDK keys a request's cancellation (and over HTTP the stream its
// answer goes to) by its id: a second request under an id in progress took both over, so
// the first could no longer be cancelled, and over HTTP its answer was lost.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';

type RequestId = string | number;

/** What to answer a refused message with: a JSON-RPC error under the id it reused. */
export interface RepeatedIdRefusal {
  readonly id: RequestId;
  readonly error: { readonly code: number; readonly message: string };
}

/** JSON-RPC's "Invalid Request". */
const INVALID_REQUEST = -32600;

function requestIdOf(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null || typeof (message as { method?: unknown }).method !== 'string') return undefined;
  const id = (message as { id?: unknown }).id;
  return typeof id === 'string' || typeof id === 'number' ? id : undefined;
}

/**
 * The request a `notifications/cancelled` names: it will never be answered (MCP). Not an id of
 * 0 or "": the SDK ignores a cancel naming either (it tests the id for truth), so that request
 * runs on and is answered, and its id stays in use until then.
 */
function cancelledRequestId(message: unknown): RequestId | undefined {
  if (typeof message !== 'object' || message === null || (message as { method?: unknown }).method !== 'notifications/cancelled') return undefined;
  const params = (message as { params?: unknown }).params;
  const id = typeof params === 'object' && params !== null ? (params as { requestId?: unknown }).requestId : undefined;
  return (typeof id === 'string' || typeof id === 'number') && id !== 0 && id !== '' ? id : undefined;
}

/** What the client sent: a message, or a batch of them. */
const messagesOf = (sent: unknown): readonly unknown[] => (Array.isArray(sent) ? (sent as unknown[]) : [sent]);

/** The requests the cancels among `sent` name (a batch may hold several). */
export function cancelledRequestIds(sent: unknown): RequestId[] {
  return messagesOf(sent).flatMap((message) => {
    const id = cancelledRequestId(message);
    return id === undefined ? [] : [id];
  });
}

export class RequestIdsInFlight {
  readonly #ids = new Set<RequestId>();

  /** Frees each id as `transport` sends its answer: wrap the transport once it is connected. */
  constructor(transport: Pick<Transport, 'send'>) {
    const send = transport.send.bind(transport);
    transport.send = (message, options) => {
      const answered = message as { id?: unknown; method?: unknown };
      if (answered.method === undefined && (typeof answered.id === 'string' || typeof answered.id === 'number')) this.#ids.delete(answered.id);
      return send(message, options);
    };
  }

  /**
   * Takes in what the client sent (a message, or a batch of them): undefined when it may go
   * on, else the refusal for the whole of it, and nothing of it is taken in.
   */
  admit(sent: unknown): RepeatedIdRefusal | undefined {
    const messages = messagesOf(sent);
    const ids = requestIdsOf(messages);
    const repeated = ids.find((id, index) => this.#ids.has(id) || ids.indexOf(id) !== index);
    if (repeated !== undefined) {
      return { id: repeated, error: { code: INVALID_REQUEST, message: `request id ${JSON.stringify(repeated)} is in use by a request in progress: an id may not be reused in a session` } };
    }
    for (const id of ids) this.#ids.add(id);
    for (const cancelled of cancelledRequestIds(messages)) this.#ids.delete(cancelled);
    return undefined;
  }

  /** Frees the ids of what `admit` took in that the SDK then refused whole, unanswered (an HTTP error status). */
  release(sent: unknown): void {
    for (const id of requestIdsOf(messagesOf(sent))) this.#ids.delete(id);
  }
}

/** The ids of the requests among what the client sent. */
export const requestIdsIn = (sent: unknown): RequestId[] => requestIdsOf(messagesOf(sent));

function requestIdsOf(messages: readonly unknown[]): RequestId[] {
  return messages.flatMap((message) => {
    const id = requestIdOf(message);
    return id === undefined ? [] : [id];
  });
}
