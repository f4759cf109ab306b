// Holds registered tools by name and projects their model-facing schemas.
import { AirlockError } from '../errors/airlock-error.js';
import type { z } from 'zod';
import { defineTool, zodOutputOf, zodParametersOf } from '../tool/define-tool.js';
import { schemaOf, type ToolSchema } from '../tool/schema-of.js';
import type { AnyTool } from '../tool/tool-definition.js';
import { compileValidator, type SchemaValidator } from '../validation/compile-validator.js';

export interface RegisteredTool {
  readonly definition: AnyTool;
  readonly validateArgs: SchemaValidator;
  /** A zod-authored tool's own schema: its arguments are parsed with it before permission is decided. */
  readonly zodParameters?: z.ZodType | undefined;
  readonly validateOutput: SchemaValidator | undefined;
  /** A zod-authored output's own schema: a value its JSON Schema passes is checked against it too (refinements). */
  readonly zodOutput?: z.ZodType | undefined;
}

export class ToolRegistry {
  // A Map, not an object: "constructor" or "__proto__" can only be unknown names.
  readonly #tools = new Map<string, RegisteredTool>();

  /** A real ToolRegistry (a brand check: an object made from its prototype, or a Proxy of one, is not). */
  static isRegistry(value: unknown): value is ToolRegistry {
    return typeof value === 'object' && value !== null && #tools in value;
  }

  constructor(tools: Iterable<AnyTool> = []) {
    for (const tool of tools) this.register(tool);
  }

  /** Checks, snapshots and compiles the tool; throws AirlockError on any fault. */
  register(tool: AnyTool): RegisteredTool {
    const definition = defineTool(tool);
    if (this.#tools.has(definition.name)) {
      throw new AirlockError('DUPLICATE_TOOL', `tool "${definition.name}" is already registered`, { tool: definition.name });
    }
    const registered: RegisteredTool = Object.freeze({
      definition,
      validateArgs: compileValidator(definition.parameters, definition.name, 'parameters'),
      zodParameters: zodParametersOf(definition),
      validateOutput: definition.output === undefined ? undefined : compileValidator(definition.output, definition.name, 'output'),
      zodOutput: zodOutputOf(definition),
    });
    this.#tools.set(definition.name, registered);
    return registered;
  }

  unregister(name: string): boolean {
    return this.#tools.delete(name);
  }

  get(name: string): RegisteredTool | undefined {
    return this.#tools.get(name);
  }

  has(name: string): boolean {
    return this.#tools.has(name);
  }

  names(): string[] {
    return [...this.#tools.keys()];
  }

  /** Model-facing schemas, fresh copies each call: mutating them never reaches the registry. */
  schemas(): ToolSchema[] {
    return [...this.#tools.values()].map((tool) => schemaOf(tool.definition));
  }
}
