// Every call walks these stages, in this order, from any source. The pipeline walks this
// list (run-call.ts), so the order is declared once, here.
export const PIPELINE_STAGES = ['parse', 'permission', 'guards', 'execute', 'postProcess', 'result'] as const;
export type PipelineStage = (typeof PIPELINE_STAGES)[number];
