// What the pipeline's stages read: the engine's options after createEngine checked them.
import type { PermissionPolicy } from '../permission/permission-policy.js';
import type { ToolRegistry } from '../registry/tool-registry.js';
import type { Approver, ExecuteWrapper, Guard, PipelineObservers } from './hooks.js';
import type { PipelineLimits } from './pipeline-limits.js';

export interface PipelineConfig {
  readonly registry: ToolRegistry;
  readonly policy: PermissionPolicy;
  readonly approver?: Approver | undefined;
  readonly guards: readonly Guard[];
  readonly executeWrappers: readonly ExecuteWrapper[];
  readonly observers: PipelineObservers;
  readonly limits: PipelineLimits;
}
