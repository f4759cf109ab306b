// The values each secret took in recent calls, whichever tenant's. A per-tenant secret is a
// different value in each tenant's call, and a redaction that knows only this call's value
// passes another's: an outside attacker had a shared cache (keyed on the URL, as Varnish's
// default and CDNs do) serve one tenant's call an answer that echoed another tenant's key.
// So answers are also screened for the values the same secret took lately.

export class RecentSecretValues {
  readonly #values = new Map<string, Set<string>>();

  constructor(private readonly perSecret: number) {}

  /** Notes that secret `name` was given `value` (the most recent goes last; the oldest past the bound is forgotten). */
  remember(name: string, value: string): void {
    let values = this.#values.get(name);
    if (values === undefined) this.#values.set(name, (values = new Set()));
    values.delete(value);
    values.add(value);
    if (values.size > this.perSecret) values.delete(values.values().next().value as string);
  }

  /** Every value these secrets took lately. */
  valuesOf(names: readonly string[]): string[] {
    return names.flatMap((name) => [...(this.#values.get(name) ?? [])]);
  }
}
