// The host end of the one function every realm in this worker can reach. Messages name the
// token of the call that made them; only live calls are registered, so a message from work
// a call left behind, or one that names another call, finds nothing and changes nothing.
import ivm from './ivm.js';
import { randomUUID } from 'node:crypto';
import { LiveCall, type LiveCallOptions } from './live-call.js';

export class CallRegistry {
  readonly #calls = new Map<string, LiveCall>();
  /**
   * Handed to each realm's bootstrap, which keeps it in its closure. "ignored": a realm's
   * call returns at once and runs `receive` on this thread later, in order, like a
   * Reference's applyIgnored; its arguments are copies.
   */
  readonly callback = new ivm.Callback((kind: unknown, token: unknown, a: unknown, b: unknown, c: unknown): void => this.receive(kind, token, a, b, c), { ignored: true });

  /** A message from a realm, whatever it holds: only one naming a live call's token does anything. */
  receive(kind: unknown, token: unknown, a: unknown, b: unknown, c: unknown): void {
    if (typeof token !== 'string') return;
    const call = this.#calls.get(token);
    if (call === undefined) return;
    if (kind === 'report' && typeof a === 'string' && typeof b === 'string') call.report(a, b);
    else if (kind === 'capability' && typeof a === 'number' && typeof b === 'string' && typeof c === 'string') call.request(a, b, c);
    else if (kind === 'log' && typeof a === 'string' && typeof b === 'string') call.log(a, b);
    else if (kind === 'native' && typeof a === 'number') call.countNativeUnits(a);
    else if (kind === 'logs-dropped' && typeof a === 'number') call.countDroppedLogs(a);
    else if (kind === 'requests-refused' && typeof a === 'number') call.countRefusedRequests(a);
  }

  open(options: Omit<LiveCallOptions, 'token'>): LiveCall {
    // Unguessable (122 random bits, from Node's pooled CSPRNG: cheap per call), though only
    // the bootstrap ever holds one: defence in depth.
    const call = new LiveCall({ ...options, token: randomUUID() });
    this.#calls.set(call.token, call);
    return call;
  }

  close(call: LiveCall): void {
    call.end();
    this.#calls.delete(call.token);
  }
}
