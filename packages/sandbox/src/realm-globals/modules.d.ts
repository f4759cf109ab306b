// The few entry points of untyped packages this bundle uses.
declare module 'whatwg-url' {
  export const URL: unknown;
  export const URLSearchParams: unknown;
}
declare module '@ungap/structured-clone' {
  export type SerializedRecord = [number | string, unknown];
  export function serialize(value: unknown, options?: { json?: boolean; lossy?: boolean }): SerializedRecord[];
  export function deserialize(records: SerializedRecord[]): unknown;
}
declare module '@exodus/bytes/encoding-lite.js' {
  export { TextDecoder, TextEncoder } from '@exodus/bytes/encoding.js';
}
