// The module a Code Mode realm loads: one tool whose body compiles the model's program and
// runs it with `tools` as its only way out. It is sent as text (`toString()`), like the
// realm bootstrap, so it references nothing outside itself.
//
// Its top level runs first in a fresh realm, before the program: it captures what it relies
// on, so a program that replaces Promise, Error, Reflect or Object.prototype's members breaks
// only itself. The program is compiled with the AsyncFunction constructor: global scope, so
// it cannot see this module's variables (the capability function above all). Each tool call
// leaves through the capability as `{ name, args }` and answers `{ ok, value }` or
// `{ ok: false, code, message }`; the host enforces every cap, and the queue here only lets an
// honest `Promise.all` over more tools than may be in flight wait instead of failing.

interface ProgramArgs {
  readonly code: string;
  readonly tools: readonly string[];
  readonly maxCallsInFlight: number;
}

type CapabilityFn = (argument: unknown) => Promise<unknown>;

interface Waiting {
  readonly start: () => void;
  next: Waiting | undefined;
}

export function codeModeRuntime(capabilityName: string): (args: ProgramArgs, ctx: { readonly capabilities: Readonly<Record<string, CapabilityFn>> }) => Promise<unknown> {
  'use strict';
  const AsyncFunction = Object.getPrototypeOf(async function () {}).constructor as new (...params: string[]) => (...args: unknown[]) => Promise<unknown>;
  const PromiseIntrinsic = Promise;
  const ErrorIntrinsic = Error;
  const apply = Reflect.apply;
  const then = Promise.prototype.then;
  const freeze = Object.freeze;
  const defineProperty = Object.defineProperty;
  const createNull = Object.create as (proto: null) => Record<string, unknown>;
  const isArray = Array.isArray;

  function toolError(code: string, message: string): Error {
    const error = new ErrorIntrinsic(message);
    defineProperty(error, 'code', { value: code, enumerable: true, writable: true, configurable: true });
    defineProperty(error, 'name', { value: 'ToolError', writable: true, configurable: true });
    return error;
  }

  return function execute(args, ctx) {
    const call = ctx.capabilities[capabilityName] as CapabilityFn;
    const limit = args.maxCallsInFlight;
    let inFlight = 0;
    let head: Waiting | undefined;
    let tail: Waiting | undefined;

    function release(): void {
      inFlight -= 1;
      const next = head;
      if (next === undefined) return;
      head = next.next;
      if (head === undefined) tail = undefined;
      inFlight += 1;
      next.start();
    }

    function toolFunction(name: string): (toolArgs?: unknown) => Promise<unknown> {
      return function (toolArgs?: unknown): Promise<unknown> {
        return new PromiseIntrinsic(function (resolve, reject) {
          const start = (): void => {
            let pending: Promise<unknown>;
            try {
              pending = call({ name, args: toolArgs === undefined ? {} : toolArgs });
            } catch (error) {
              release();
              return reject(error);
            }
            apply(then, pending, [
              function (answer: unknown) {
                release();
                const reply = answer as { ok?: unknown; value?: unknown; code?: unknown; message?: unknown } | null;
                if (reply !== null && typeof reply === 'object' && reply.ok === true) resolve(reply.value);
                else if (reply !== null && typeof reply === 'object') reject(toolError(String(reply.code), String(reply.message)));
                else reject(toolError('TOOL_ERROR', name + ': no answer'));
              },
              function (error: unknown) {
                // The capability channel's own refusal (TOO_LARGE, TOO_MANY_REQUESTS, ...), built in this realm.
                release();
                reject(error);
              },
            ]);
          };
          if (inFlight < limit) {
            inFlight += 1;
            start();
          } else {
            const waiting: Waiting = { start, next: undefined };
            if (tail === undefined) head = waiting;
            else tail.next = waiting;
            tail = waiting;
          }
        });
      };
    }

    const tools = createNull(null);
    const names = isArray(args.tools) ? args.tools : [];
    for (let i = 0; i < names.length; i += 1) {
      const name = names[i] as string;
      defineProperty(tools, name, { value: toolFunction(name), enumerable: true });
    }
    freeze(tools);
    // A program that does not compile throws here: the call ends as TOOL_ERROR with V8's message.
    const program = new AsyncFunction('tools', args.code);
    const running = program(tools);
    // An uncaught tool failure names its code, so the model reads why in the one line it gets.
    return apply(then, running, [undefined, function (error: unknown) {
      let code: unknown;
      let message: unknown;
      try {
        code = error !== null && typeof error === 'object' ? (error as { code?: unknown }).code : undefined;
        message = error !== null && typeof error === 'object' ? (error as { message?: unknown }).message : undefined;
      } catch {
        throw error;
      }
      // Worded as the program's own error: a thrown { code: 'PERMISSION_DENIED' } must not read like a gate decision.
      if (typeof code === 'string' && typeof message === 'string') throw new ErrorIntrinsic('the program threw an error with code ' + code + ': ' + message);
      throw error;
    }]) as Promise<unknown>;
  };
}

/** The module source: the runtime above as the default export's one tool. */
export function codeModeModuleSource(toolName: string, capabilityName: string): string {
  return [
    `const execute = (${codeModeRuntime.toString()})(${JSON.stringify(capabilityName)});`,
    `export default { tools: [{ name: ${JSON.stringify(toolName)}, description: 'A Code Mode program.', parameters: { type: 'object' }, execute }] };`,
    '',
  ].join('\n');
}
