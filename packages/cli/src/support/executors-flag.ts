// --executors <url> on run and serve: sandboxed calls go to `airlock executor` processes over NATS.
export const EXECUTORS_FLAG = { executors: { type: 'string' } } as const;

export const EXECUTORS_HELP = `  --executors <url>   run plugin code on "airlock executor" processes reached over this NATS
                      server (e.g. nats://127.0.0.1:4222) instead of local sandbox processes;
                      secrets, workspace and kv stay here; not with --code-mode`;
