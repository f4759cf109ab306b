// A request that breaks MCP's schema is answered with one line naming the part at fault: the
// MCP SDK's own answer is the zod error's multi-line JSON dump.
import type { z } from 'zod';

const EXPECTED: Readonly<Record<string, string>> = {
  record: 'an object',
  object: 'an object',
  string: 'a string',
  number: 'a number',
  int: 'an integer',
  boolean: 'true or false',
  array: 'an array',
};

/** `tools/call: params.arguments must be an object`, from the first issue of a failed parse. */
export function paramsProblem(method: string, error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue === undefined) return `${method}: the request does not match MCP's schema`;
  const path = issue.path.map((key, index) => (typeof key === 'number' ? `[${key}]` : /^[A-Za-z_$][\w$]*$/.test(String(key)) ? `${index === 0 ? '' : '.'}${String(key)}` : `[${JSON.stringify(String(key))}]`)).join('');
  const expected = issue.code === 'invalid_type' ? EXPECTED[issue.expected] : undefined;
  return `${method}: ${path === '' ? 'the request' : path} ${expected === undefined ? "does not match MCP's schema" : `must be ${expected}`}`;
}
