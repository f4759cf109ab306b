// The public API of @airlock/core: everything a user may import is named here.
// Named exports only; types apart.

export { AirlockError } from './errors/airlock-error.js';
export type { AirlockErrorCode } from './errors/airlock-error.js';
export { ERROR_CODES } from './errors/error-codes.js';
export type { ErrorCode } from './errors/error-codes.js';
export { RESULT_CODES, isResultCode } from './errors/result-codes.js';
export type { ResultCode } from './errors/result-codes.js';
export { ToolCallError } from './errors/tool-call-error.js';

export type { JsonObject, JsonPrimitive, JsonSchema, JsonValue } from './json/json-types.js';
export { snapshotJson } from './json/snapshot-json.js';
export type { SnapshotOptions } from './json/snapshot-json.js';
export { parseJsonArguments, jsonTextDepth, firstRoundedInteger, roundedIntegers } from './json/parse-json-arguments.js';

export { defineTool, TOOL_NAME_PATTERN } from './tool/define-tool.js';
export type { ToolInput } from './tool/define-tool.js';
export { MODEL_FACING_FIELDS, HOST_ONLY_FIELDS } from './tool/tool-definition.js';
export type { AnyTool, Card, ExecContext, HostOnlyFields, ModelFacingFields, ToolDefinition } from './tool/tool-definition.js';
export { schemaOf } from './tool/schema-of.js';
export type { ToolSchema } from './tool/schema-of.js';
export { toJsonSchema } from './tool/to-json-schema.js';

export { ToolRegistry } from './registry/tool-registry.js';
export type { RegisteredTool } from './registry/tool-registry.js';
export { compileValidator, DEFAULT_VALIDATION_BUDGET, type SchemaValidator, type ValidationBudget } from './validation/compile-validator.js';
export { describeValidationErrors } from './validation/describe-errors.js';

export { openaiChat } from './providers/openai-chat.js';
export type { OpenAIChatTool, OpenAIChatToolMessage } from './providers/openai-chat.js';
export { openaiResponses } from './providers/openai-responses.js';
export type { OpenAIResponsesTool, OpenAIResponsesToolOutput } from './providers/openai-responses.js';
export { anthropicMessages } from './providers/anthropic-messages.js';
export type { AnthropicTool, AnthropicToolResultBlock, AnthropicToolResultMessage } from './providers/anthropic-messages.js';
export { gemini } from './providers/gemini.js';
export type { GeminiFunctionDeclaration, GeminiFunctionResponseContent } from './providers/gemini.js';
export { mcp, mcpCallToolResult, mcpToolsWithOutput } from './providers/mcp.js';
export type { McpCallToolResult, McpTool } from './providers/mcp.js';
export { sharedOutputSchema } from './tool/shared-output.js';
export { PROVIDERS, PROVIDER_IDS } from './providers/providers.js';
export type { ProviderTool, ProviderToolMessage } from './providers/providers.js';
export type { ProviderFormat, ProviderId, ToolCallRequest } from './providers/provider-format.js';
export { detectToolCallMessage } from './providers/detect-provider.js';
export type { DetectedMessage } from './providers/detect-provider.js';

export { createPolicy, DEFAULT_TENANT, toolNameMatcher } from './permission/permission-policy.js';
export type { Decision, PermissionPolicy, PolicyConfig, PolicyRule, PolicyVerdict } from './permission/permission-policy.js';
export type { ArgumentCondition } from './permission/path-condition.js';

export { PIPELINE_STAGES } from './pipeline/stage-order.js';
export type { PipelineStage } from './pipeline/stage-order.js';
export { DEFAULT_LIMITS } from './pipeline/pipeline-limits.js';
export type { PipelineLimits } from './pipeline/pipeline-limits.js';
export type { ApprovalRequest, Approver, ContainedErrorContext, ExecuteWrapper, Guard, GuardInput, PipelineObservers } from './pipeline/hooks.js';
export type { ParsedCall } from './pipeline/parsed-call.js';
export { classifyCall, groupCalls } from './scheduler/classify-call.js';
export type { CallClass } from './scheduler/classify-call.js';
export type { PreSchedule, TurnOptions } from './scheduler/run-turn.js';

export { createEngine } from './engine.js';
export type { Engine, EngineOptions, ToolListOptions, ToolSource } from './engine.js';

export { genericCallCard, genericResultCard, visibleCard } from './present/generic-cards.js';
export type { DraftResult, ResultMetadata, ToolFailure, ToolResult, ToolSuccess } from './result/tool-result.js';
export { failureContent } from './result/tool-result.js';
export { sanitizeMessage } from './util/sanitize-message.js';
export { escapeControls, findControlCharacter } from './util/visible-text.js';
export { closestName, didYouMean } from './util/did-you-mean.js';
export { onAbort } from './util/on-abort.js';
export { linkAbortSignal } from './util/merge-abort-signals.js';
export type { LinkedAbort } from './util/merge-abort-signals.js';

export { createCodeTool, codeModeTools, codeToolDescription, DEFAULT_CODE_TOOL_NAME } from './code-mode/code-tool.js';
export type { CodeLogLine, CodeModeValue, CodeRunOutcome, CodeRunRequest, CodeRunner, CodeToolOptions } from './code-mode/code-tool.js';
export { codeModeDeclarations } from './code-mode/code-mode-declarations.js';
export type { DeclaredTool } from './code-mode/code-mode-declarations.js';
export { schemaToTypeScript } from './code-mode/schema-to-typescript.js';
export { codeModeLimits, DEFAULT_CODE_MODE_LIMITS } from './code-mode/code-mode-limits.js';
export type { CodeModeLimits } from './code-mode/code-mode-limits.js';
export type { SubCallAnswer, SubCallRecord } from './code-mode/sub-calls.js';
