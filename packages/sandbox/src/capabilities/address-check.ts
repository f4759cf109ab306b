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
  ['::', 96], ['::1', 128], ['100::', 64], ['fc00::', 7], ['fe80::', 10], ['ff00::', 8], ['64:ff9b::', 96], ['2001:db8::', 32],
] as const) refused.addSubnet(network, prefix, 'ipv6');

/** True for an address a request may reach only when the allowlist names its host exactly. */
export function isInternalAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return refused.check(address, 'ipv4');
  if (family !== 6) return true; // not an address at all: refuse
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped !== null) return refused.check(mapped[1] as string, 'ipv4');
  return refused.check(address, 'ipv6');
}
