// The open MCP sessions of `airlock serve --http`: a cap on how many (in all and per
// tenant), and idle expiry, so sessions nobody uses stop holding memory. A session is
// idle while none of its requests is in flight; a standalone SSE stream (GET) does not
// keep it alive, so holding one open cannot pin a session forever.

export interface SessionLimits {
  /** Most sessions open at once, across tenants. */
  readonly maxSessions: number;
  /** Most sessions one tenant may hold. */
  readonly maxPerTenant: number;
  /** A session with no request in flight for this long is closed. */
  readonly idleMs: number;
}

export interface Closable {
  close(): Promise<void>;
}

interface Entry<T> {
  readonly value: T;
  readonly tenant: string;
  inFlight: number;
  timer: NodeJS.Timeout | undefined;
}

export type Admission = { readonly ok: true; readonly release: () => void } | { readonly ok: false; readonly status: number; readonly message: string };

export class SessionTable<T extends Closable> {
  readonly #sessions = new Map<string, Entry<T>>();
  readonly #perTenant = new Map<string, number>();
  #reserved = 0;

  constructor(
    private readonly limits: SessionLimits,
    private readonly onExpire: (id: string, tenant: string) => void,
  ) {}

  get size(): number {
    return this.#sessions.size;
  }

  /** Reserves a place for a session being opened for `tenant`; `release` it if the session never starts. */
  admit(tenant: string): Admission {
    if (this.#sessions.size + this.#reserved >= this.limits.maxSessions) {
      return { ok: false, status: 503, message: `too many sessions: ${this.limits.maxSessions} are open (--max-sessions); close one or retry when one idles out` };
    }
    const held = this.#perTenant.get(tenant) ?? 0;
    if (held >= this.limits.maxPerTenant) {
      return { ok: false, status: 429, message: `tenant "${tenant}" already holds ${held} sessions (--max-sessions-per-tenant ${this.limits.maxPerTenant}); close one first` };
    }
    this.#reserved += 1;
    this.#perTenant.set(tenant, held + 1);
    let released = false;
    return {
      ok: true,
      release: () => {
        if (released) return;
        released = true;
        this.#reserved -= 1;
        this.#dropTenant(tenant);
      },
    };
  }

  /** Turns a reservation into an open session (the reservation's release must not be called after). */
  add(id: string, tenant: string, value: T): void {
    this.#reserved -= 1;
    const entry: Entry<T> = { value, tenant, inFlight: 0, timer: undefined };
    this.#sessions.set(id, entry);
    this.#arm(id, entry);
  }

  get(id: string): { readonly value: T; readonly tenant: string } | undefined {
    return this.#sessions.get(id);
  }

  /** Marks a request of session `id` in flight; call the returned function when it ends. */
  begin(id: string): () => void {
    const entry = this.#sessions.get(id);
    if (entry === undefined) return () => undefined;
    entry.inFlight += 1;
    clearTimeout(entry.timer);
    entry.timer = undefined;
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      entry.inFlight -= 1;
      if (this.#sessions.get(id) === entry) this.#arm(id, entry);
    };
  }

  /** Forgets a session that closed (DELETE, transport closed); true when it was open. */
  remove(id: string): boolean {
    const entry = this.#sessions.get(id);
    if (entry === undefined) return false;
    clearTimeout(entry.timer);
    this.#sessions.delete(id);
    this.#dropTenant(entry.tenant);
    return true;
  }

  async closeAll(): Promise<void> {
    const values = [...this.#sessions.keys()].map((id) => {
      const value = this.#sessions.get(id)!.value;
      this.remove(id);
      return value;
    });
    await Promise.all(values.map((value) => value.close().catch(() => undefined)));
  }

  #arm(id: string, entry: Entry<T>): void {
    if (entry.inFlight > 0) return;
    clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (!this.remove(id)) return;
      this.onExpire(id, entry.tenant);
      void entry.value.close().catch(() => undefined);
    }, this.limits.idleMs);
    entry.timer.unref();
  }

  #dropTenant(tenant: string): void {
    const held = (this.#perTenant.get(tenant) ?? 1) - 1;
    if (held <= 0) this.#perTenant.delete(tenant);
    else this.#perTenant.set(tenant, held);
  }
}
