// Raw process-boundary baseline: a child process holding the raw Piscina + isolated-vm pool,
// answering each IPC request with its task's result. Airlock's default mode with nothing of
// Airlock in it: what any design that keeps plugins out of the embedder's process pays.
// It also answers the same call made with the asynchronous apply, alone or ten in one message:
// the floor of a sandbox that keeps both the process boundary and a safe way into the isolate.
import { Piscina } from 'piscina';

const pool = new Piscina<string, string>({ filename: new URL('./piscina-ivm-worker.js', import.meta.url).href, minThreads: 2, maxThreads: 2, concurrentTasksPerWorker: 1 });

/** One call, or `count` calls answered in one message; `async`: with the asynchronous apply untrusted code needs. */
interface Request {
  readonly id: number;
  readonly argsJson: string;
  readonly count?: number;
  readonly async?: boolean;
}

process.on('message', (message: Request) => {
  const options = message.async === true ? { name: 'runAsync' } : {};
  const run = (): Promise<string> => pool.run(message.argsJson, options);
  const answered = message.count === undefined ? run() : Promise.all(Array.from({ length: message.count }, run));
  void answered.then((json) => process.send?.({ id: message.id, json }));
});
process.on('disconnect', () => process.exit(0));
process.send?.({ ready: true });
