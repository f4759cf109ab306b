// Raw Piscina baseline: the cheapest possible task, so a sandboxed call's round trip
// can be read against the pool's own cost.
export default function noop(task: unknown): unknown {
  return task;
}
