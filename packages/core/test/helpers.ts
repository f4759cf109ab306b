import { createEngine, defineTool, type AnyTool, type EngineOptions, type JsonValue, type ToolCallRequest } from '../src/index.js';

/** A promise the test resolves by hand: an explicit signal instead of a sleep. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (value: T) => void; reject: (error: unknown) => void } {
  let resolve!: (value: T) => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

export function tool(name: string, overrides: Partial<AnyTool> = {}): AnyTool {
  return defineTool({
    name,
    description: `${name} tool`,
    parameters: { type: 'object', properties: { id: { type: 'string' }, path: { type: 'string' } }, additionalProperties: false },
    execute: (): JsonValue => ({ ok: true }),
    ...overrides,
  } as Parameters<typeof defineTool>[0]);
}

export function call(name: string, args: JsonValue | string = {}, id = `${name}-${Math.random().toString(36).slice(2, 8)}`): ToolCallRequest {
  return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

export function engine(tools: AnyTool[], options: Partial<EngineOptions> = {}) {
  return createEngine({ policy: { default: 'allow' }, ...options, tools });
}
