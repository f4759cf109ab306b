// A workspace path as the plugin wrote it, reduced to plain name segments below the
// tenant's folder. Anything that could name a place outside it is refused here, before
// the file system is touched: absolute paths, "..", backslashes, drive letters, invisible
// characters, over-long names, and the names the workspace keeps for its own temp files.
import { createHash } from 'node:crypto';
import { join, resolve } from 'node:path';
import { CapabilityRefusal, hasInvisible } from './capability-argument.js';

export const MAX_PATH_BYTES = 1024;
/** NAME_MAX on common file systems. */
export const MAX_SEGMENT_BYTES = 255;
/** Written first, renamed over the target: never listed, never addressable by a plugin. */
export const TEMP_PREFIX = '.airlock-tmp-';

export function workspaceSegments(path: string, allowRoot: boolean): string[] {
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) throw new CapabilityRefusal(`workspace path longer than ${MAX_PATH_BYTES} bytes`);
  if (hasInvisible(path)) throw new CapabilityRefusal('workspace path contains control characters');
  if (path.startsWith('/') || path.startsWith('~') || /^[a-zA-Z]:/.test(path)) throw new CapabilityRefusal('workspace paths are relative to the workspace');
  if (path.includes('\\')) throw new CapabilityRefusal('workspace paths use "/" only');
  const segments = path.split('/').filter((segment) => segment !== '' && segment !== '.');
  for (const segment of segments) {
    if (segment === '..') throw new CapabilityRefusal('workspace paths may not use ".."');
    if (Buffer.byteLength(segment, 'utf8') > MAX_SEGMENT_BYTES) throw new CapabilityRefusal(`workspace path segment longer than ${MAX_SEGMENT_BYTES} bytes`);
    if (segment.startsWith(TEMP_PREFIX)) throw new CapabilityRefusal('workspace path names a temp file');
  }
  if (!allowRoot && segments.length === 0) throw new CapabilityRefusal('workspace path names no file');
  return segments;
}

/**
 * The tenant's folder name: readable for ordinary ids, and never ".", "..", a separator or
 * an over-long name, whatever the embedder passes as a tenant id. Two ids never share a
 * folder: the encoding only ever emits letters, digits, "-", "_" and "%", so the hashed
 * form, which starts with "=", can never be the encoding of another id.
 */
export function tenantFolderName(tenant: string): string {
  let encoded = '';
  try {
    encoded = encodeURIComponent(tenant).replace(/[.!~*'()%]/g, (char) => (char === '%' ? '%' : `%${char.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`));
  } catch {
    // A lone surrogate cannot be percent-encoded: hashed below.
  }
  if (encoded.length > 0 && encoded.length <= 128) return encoded;
  // UTF-16 code units, not UTF-8: lone surrogates would all become U+FFFD and collide.
  return `=${createHash('sha256').update(Buffer.from(tenant, 'utf16le')).digest('hex')}`;
}

/** Where a tenant's workspace files are, under the host's workspace folder. */
export function workspaceFolder(dir: string, tenant: string): string {
  return join(resolve(dir), tenantFolderName(tenant));
}
