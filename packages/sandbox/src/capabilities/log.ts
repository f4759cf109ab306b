// The log capability: a plugin's own structured log lines, kept with its console output in
// the one per-call log the operator sees (`results[i].logs`, stderr in cards mode, MCP
// logging notifications from `serve`), under the same bounds. The worker that runs the call
// records each well-formed request as it arrives, in order with the console lines (see
// LiveCall); the host's side only checks the request, so a malformed one fails in the plugin
// and is counted like any other capability request.
import type { Capability } from '../plugin/capability-handler.js';
import { CapabilityRefusal } from './capability-argument.js';
import { logLineOf } from './log-line.js';

export const logCapability: Capability = (argument) => {
  if (logLineOf(argument) === undefined) throw new CapabilityRefusal('log takes { level: "debug" | "info" | "warn" | "error", message: string, data? }');
  return null;
};
