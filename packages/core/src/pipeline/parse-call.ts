// Stage 1: provider call to frozen arguments, or a failure result. Never throws.
import { parseJsonArguments } from '../json/parse-json-arguments.js';
import type { JsonObject } from '../json/json-types.js';
import type { ToolCallRequest } from '../providers/provider-format.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import { describeValidationErrors } from '../validation/describe-errors.js';
import type { ParsedCall, PipelineLimits } from './pipeline-config.js';

export function parseCall(registry: ToolRegistry, request: ToolCallRequest, index: number, limits: PipelineLimits): ParsedCall {
  const startedAt = performance.now();
  const base = { index, callId: String(request.id), name: String(request.name), startedAt };
  const tool = registry.get(base.name);
  if (tool === undefined) {
    const known = registry.names();
    const hint = known.length > 0 ? ` Available tools: ${known.slice(0, 20).join(', ')}${known.length > 20 ? ', …' : ''}.` : '';
    return { ...base, tool, args: undefined, failure: { code: 'UNKNOWN_TOOL', message: `no tool named "${base.name}".${hint}` } };
  }
  const parsed = parseJsonArguments(request.arguments, limits);
  if (!parsed.ok) return { ...base, tool, args: undefined, failure: { code: 'INVALID_ARGS', message: `${base.name}: ${parsed.message}` } };
  const value = parsed.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return { ...base, tool, args: undefined, failure: { code: 'INVALID_ARGS', message: `${base.name}: arguments must be a JSON object, got ${value === null ? 'null' : Array.isArray(value) ? 'an array' : typeof value}` } };
  }
  if (!tool.validateArgs(value)) {
    return { ...base, tool, args: undefined, failure: { code: 'INVALID_ARGS', message: `${base.name}: invalid arguments: ${describeValidationErrors(tool.validateArgs.errors)}` } };
  }
  return { ...base, tool, args: value as JsonObject, failure: undefined };
}
