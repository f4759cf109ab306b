// Addresses a plugin's request may not connect to unless the allowlist names that exact
// host: loopback, private, link-local (cloud metadata lives there), carrier-grade NAT,
// unspecified, multicast and reserved ranges, in IPv4 and IPv6 (IPv4-mapped and -compatible included).
import { BlockList, isIP } from 'node:net';

const refused = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8], ['10.0.0.0', 8], ['100.64.0.0', 10], ['127.0.0.0', 8], ['169.254.0.0', 16], ['172.16.0.0', 12],
  ['192.0.0.0', 24], ['192.168.0.0', 16], ['198.18.0.0', 15], ['224.0.0.0', 4], ['240.0.0.0', 4],
] as const) refused.addSubnet(network, prefix, 'ipv4');
for (const [network, prefix] of [
  // ::/96 also holds the deprecated IPv4-compatible form (::127.0.0.1); 100::/64 discards.
  ['::', 96], ['::1', 128], ['100::', 64], ['fc00::', 7], ['fe80::', 10], ['fec0::', 10], ['ff00::', 8], ['2001:db8::', 32],
  // Translation prefixes a gateway turns into IPv4 of its choosing: SIIT (::ffff:0:a.b.c.d),
  // NAT64 (well-known and local-use) and Teredo. Refused whole: no allowlisted API lives there.
  ['::ffff:0:0:0', 96], ['64:ff9b::', 96], ['64:ff9b:1::', 48], ['2001::', 32],
] as const) refused.addSubnet(network, prefix, 'ipv6');

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 included). */
function groups(address: string): number[] {
  let text = address.toLowerCase();
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (part: string | undefined): number[] => (part === undefined || part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const front = parse(head);
  const back = parse(tail);
  return tail === undefined ? front : [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}

/** True for an address a request may reach only when the allowlist names its host exactly. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return refused.check(mapped[1] as string, 'ipv4');
  if (refused.check(address, 'ipv6')) return true;
  const words = groups(address);
  // 6to4 (2002::/16) carries the IPv4 it reaches in its next 32 bits.
  if (words[0] === 0x2002) return refused.check([words[1]! >> 8, words[1]! & 0xff, words[2]! >> 8, words[2]! & 0xff].join('.'), 'ipv4');
  return false;
}
