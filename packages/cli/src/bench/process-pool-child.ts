// Raw process-boundary baseline: a child process holding the raw Piscina + isolated-vm pool,
// answering each IPC request with its task's result. Airlock's default mode with nothing of
// Airlock in it: what any design that keeps plugins out of the embedder's process pays.
import { Piscina } from 'piscina';

const pool = new Piscina<string, string>({ filename: new URL('./piscina-ivm-worker.js', import.meta.url).href, minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 1 });

process.on('message', (message: { readonly id: number; readonly argsJson: string }) => {
  void pool.run(message.argsJson).then((json) => process.send?.({ id: message.id, json }));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
