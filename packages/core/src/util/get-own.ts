// Model-supplied names are looked up as own properties only, so "constructor",
// "__proto__" or "toString" are simply unknown instead of reaching Object.prototype.
export function getOwn<T>(record: Readonly<Record<string, T>>, key: string): T | undefined {
  return Object.prototype.hasOwnProperty.call(record, key) ? record[key] : undefined;
}
