// serve reads tools/call arguments through the MCP SDK, which parses each message with
// JSON.parse: an integer past 2^53 reached the tool rounded, with no word said. The raw text of
// each message passes here first; the integers it rounds are kept by request id until that
// request's handler takes them and refuses a call whose arguments hold one.
import { roundedIntegers } from '@airlock/core';

type RequestId = string | number;

/** Requests noted but never handled (the SDK refused them first) are forgotten past this many. */
const MAX_NOTED = 1000;

export class RoundedRequests {
  readonly #byId = new Map<RequestId, ReadonlyMap<number, string>>();

  /**
   * Reads one message's text (a request, or a batch of them) as the client sent it. A
   * tools/call without rounded integers clears what an earlier request of its id left (one
   * the transport refused before the handler could take it).
   */
  note(text: string): void {
    const rounded = roundedIntegers(text);
    if (rounded.size === 0 && this.#byId.size === 0) return;
    let message: unknown;
    try {
      message = JSON.parse(text);
    } catch {
      return; // the transport answers it as not JSON
    }
    for (const item of Array.isArray(message) ? message : [message]) {
      const { id, method } = (item !== null && typeof item === 'object' ? item : {}) as { id?: unknown; method?: unknown };
      if (method !== 'tools/call' || (typeof id !== 'string' && typeof id !== 'number')) continue;
      if (rounded.size > 0) this.#byId.set(id, rounded);
      else this.#byId.delete(id);
    }
    for (const id of this.#byId.keys()) {
      if (this.#byId.size <= MAX_NOTED) break;
      this.#byId.delete(id);
    }
  }

  /** The integers JSON.parse rounded in the text of request `id`, once: undefined when none. */
  take(id: RequestId): ReadonlyMap<number, string> | undefined {
    const rounded = this.#byId.get(id);
    this.#byId.delete(id);
    return rounded;
  }
}
