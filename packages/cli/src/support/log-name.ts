// A name a client chose (a tool name, a tenant) as it goes into an operator's log line: cut
// to a length a terminal can take, so a client cannot write megabytes to stderr per request.
export const MAX_LOGGED_NAME = 200;

export function logName(name: string): string {
  return name.length <= MAX_LOGGED_NAME ? name : `${name.slice(0, MAX_LOGGED_NAME)}… (${name.length} chars)`;
}
