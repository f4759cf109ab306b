// Size and time limits of the pipeline, each with its unit in its name.
export interface PipelineLimits {
  /** Largest argument payload accepted, in UTF-8 bytes. Default 1 MiB. */
  readonly maxArgumentBytes: number;
  /** Deepest argument nesting accepted. Default 64. */
  readonly maxArgumentDepth: number;
  /** Largest value or content, in UTF-8 bytes of JSON text. Default 1 MiB. */
  readonly maxOutputBytes: number;
  /** How long an approver may take, in milliseconds. Default 5 minutes. */
  readonly approvalTimeoutMs: number;
  /** How long a guard that answers with a promise may take, in milliseconds; one that takes longer denies. Default 30 s. */
  readonly guardTimeoutMs: number;
  /** How long a preSchedule hook (a sandbox's classification) may take, in milliseconds; the turn then runs without its preparation. Default 30 s. */
  readonly preScheduleTimeoutMs: number;
}

export const DEFAULT_LIMITS: PipelineLimits = Object.freeze({
  maxArgumentBytes: 1024 * 1024,
  maxArgumentDepth: 64,
  maxOutputBytes: 1024 * 1024,
  approvalTimeoutMs: 5 * 60 * 1000,
  guardTimeoutMs: 30 * 1000,
  preScheduleTimeoutMs: 30 * 1000,
});
