// Stands in for tr46 (UTS #46, international domain names) inside whatwg-url, so the
// 240 KB of Unicode tables load only for a host that needs them. The URL Standard's own
// note on "domain to ASCII" allows the shortcut: when beStrict is false and the domain is
// ASCII with no label starting "xn--", UTS #46 ToASCII is exactly ASCII lowercasing.
import { charCodeAt, charFromCode } from './captured.js';

declare function require(id: string): unknown;

interface ToAsciiOptions {
  checkHyphens?: boolean;
  useSTD3ASCIIRules?: boolean;
  verifyDNSLength?: boolean;
  transitionalProcessing?: boolean;
}

interface Tr46 {
  toASCII(domain: string, options: ToAsciiOptions): string | null;
  toUnicode(domain: string, options: object): { domain: string; error: boolean };
}

const real = (): Tr46 => require('airlock-real-tr46') as Tr46;

/** ASCII lowercase of `domain`, or undefined when the shortcut does not apply (non-ASCII, or a label starting "xn--"). */
function asciiLowercase(domain: string): string | undefined {
  let out = '';
  let labelStart = 0;
  for (let i = 0; i < domain.length; i += 1) {
    let c = charCodeAt(domain, i);
    if (c >= 0x80) return undefined;
    if (c === 0x2e) labelStart = i + 1;
    else if (i === labelStart + 3 && c === 0x2d && isPunycodePrefix(domain, labelStart)) return undefined;
    if (c >= 0x41 && c <= 0x5a) c += 0x20;
    out += charFromCode(c);
  }
  return out;
}

function isPunycodePrefix(domain: string, start: number): boolean {
  return (charCodeAt(domain, start) | 0x20) === 0x78 && (charCodeAt(domain, start + 1) | 0x20) === 0x6e && charCodeAt(domain, start + 2) === 0x2d && charCodeAt(domain, start + 3) === 0x2d;
}

export function toASCII(domain: string, options: ToAsciiOptions): string | null {
  const lenient = options.checkHyphens === false && options.useSTD3ASCIIRules === false && options.verifyDNSLength === false && options.transitionalProcessing === false;
  const lowered = lenient ? asciiLowercase(domain) : undefined;
  return lowered !== undefined ? lowered : real().toASCII(domain, options);
}

export function toUnicode(domain: string, options: object): { domain: string; error: boolean } {
  return real().toUnicode(domain, options);
}
