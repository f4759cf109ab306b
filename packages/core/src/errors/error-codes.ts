// The one catalogue of the codes Airlock's thrown errors carry, in every package (core,
// sandbox, cli). docs/errors.md documents each exactly once; a test keeps the two in step.
// A tool call's failures are results, not thrown: their codes are RESULT_CODES.
export const ERROR_CODES = Object.freeze([
  // Configuration and input, thrown by @airlock/core.
  'INVALID_OPTION',
  'INVALID_TOOL_DEFINITION',
  'DUPLICATE_TOOL',
  'UNSUPPORTED_SCHEMA',
  'NOT_LOSSLESS_JSON',
  'INVALID_PROVIDER_MESSAGE',
  // Plugins and the sandbox, thrown by @airlock/sandbox (which also throws INVALID_OPTION and DUPLICATE_TOOL).
  'INVALID_PLUGIN',
  'NO_PLUGINS',
  'SNAPSHOT_FLAG_MISSING',
  'SANDBOX_CLOSED',
  'ENGINE_UNREACHABLE',
  // The command line's bad usage or input (exit 2), thrown by @airlock/cli.
  'INVALID_USAGE',
  // Failures the pipeline contained, never thrown: handed to the onError observer.
  'PRESCHEDULE_FAILED',
  'SCHEDULER_FAILED',
  'OBSERVER_FAILED',
] as const);

export type ErrorCode = (typeof ERROR_CODES)[number];
