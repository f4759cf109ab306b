// How many tenant isolates one worker thread keeps (least recently used evicted past it):
// isolate/isolate-slots.ts enforces it, and the pool's balancer (host/worker-affinity.ts)
// reads it to tell when the tenants in play no longer fit in one worker.
export const MAX_ISOLATES_PER_WORKER = 32;
