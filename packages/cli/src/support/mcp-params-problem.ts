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
  const expected = issue.code === 'invalid_type' ? EXPECTED[issue.expected] : issue.code === 'invalid_union' ? eitherOf(issue.errors) : undefined;
  return `${method}: ${path === '' ? 'the request' : path} ${expected === undefined ? "does not match MCP's schema" : `must be ${expected}`}`;
}

/** "a string or an integer" for a union of plain types (a progress token, say); undefined for any other union. */
function eitherOf(branches: readonly (readonly z.core.$ZodIssue[])[]): string | undefined {
  const names = branches.map((issues) => {
    const [only] = issues;
    return issues.length === 1 && only?.code === 'invalid_type' && only.path.length === 0 ? EXPECTED[only.expected] : undefined;
  });
  return names.every((name) => name !== undefined) && names.length > 0 ? names.join(' or ') : undefined;
}
