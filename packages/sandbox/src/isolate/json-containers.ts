// How many objects and arrays a JSON text holds, counted on the worker's thread: the host
// parses, copies and freezes each one on the embedder's main thread, which every tenant
// shares, so a result's count is bounded as its bytes are (realm-bootstrap.ts counts them as
// it serializes; this is the host's own check of what the realm sent).

/** Objects and arrays one result may hold; the realm refuses more with the same words. */
export const MAX_RESULT_CONTAINERS = 100_000;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;

/** True when `json` opens more than `limit` objects and arrays; texts too short to hold that many are not read. */
export function holdsMoreContainers(json: string, limit: number): boolean {
  // Each container takes at least two characters ("[]"), so a shorter text cannot exceed the limit.
  if (json.length <= 2 * limit) return false;
  return countContainers(json, limit) > limit;
}

/** The objects and arrays `json` opens, counted up to `limit + 1` (past the limit the count stops). */
export function countContainers(json: string, limit: number): number {
  let count = 0;
  let inString = false;
  for (let at = 0; at < json.length; at += 1) {
    const code = json.charCodeAt(at);
    if (inString) {
      if (code === BACKSLASH) at += 1;
      else if (code === QUOTE) inString = false;
    } else if (code === QUOTE) inString = true;
    else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      count += 1;
      if (count > limit) return count;
    }
  }
  return count;
}
