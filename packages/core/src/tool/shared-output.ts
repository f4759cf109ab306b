// A tool's raw value, and the output schema that describes it, are shown beside its content
// (MCP's structuredContent and outputSchema, a Code Mode program's results) only when the
// content is that value's JSON. A tool with projectContent or finalizeContent has said what the
// model reads instead, and its value may hold what that text leaves out.
import type { JsonSchema } from '../json/json-types.js';
import type { ToolDefinition } from './tool-definition.js';

type ContentFields = Pick<ToolDefinition, 'output' | 'projectContent' | 'finalizeContent'>;

/** True when the model may see this tool's value itself: its content is the value's JSON. */
export function valueIsShared(definition: ContentFields | undefined): boolean {
  return definition !== undefined && definition.projectContent === undefined && definition.finalizeContent === undefined;
}

/** The declared output schema when the value is shared (see valueIsShared); otherwise undefined. */
export function sharedOutputSchema(definition: ContentFields | undefined): JsonSchema | undefined {
  return valueIsShared(definition) ? definition!.output : undefined;
}
