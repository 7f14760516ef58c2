/**
 * Which anonymous client a request counts against: its address, and for IPv6 its /64 network,
 * since one subscriber, one host even, is commonly given a whole /64 and may pick any address in
 * it (RFC 4941 temporary addresses, or at will): counting single IPv6 addresses would give one
 * client 2^64 shares.
 */
import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The address a request came from: CloudFront's `CloudFront-Viewer-Address` (`ip:port`, an IPv6
 * address unbracketed), which the distribution adds and the load balancer, reached only from
 * CloudFront, passes on (the local gateway sets it as CloudFront does); the connection's own
 * address without it.
 */
export function clientAddress(request: IncomingMessage): string {
  const viewer = request.headers['cloudfront-viewer-address'];
  if (typeof viewer === 'string' && viewer.includes(':')) return viewer.slice(0, viewer.lastIndexOf(':'));
  return request.socket.remoteAddress ?? 'unknown';
}

/** The 8 groups of an IPv6 address, each 0–0xffff (an embedded IPv4 address as two). */
function ipv6Groups(address: string): number[] {
  let text = address.split('%')[0] ?? '';
  const embedded = /(\d+\.\d+\.\d+\.\d+)$/.exec(text)?.[1];
  if (embedded) {
    const [a = 0, b = 0, c = 0, d = 0] = embedded.split('.').map(Number);
    text = `${text.slice(0, -embedded.length)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) =>
    part === '' ? [] : part.split(':').map((group) => Number.parseInt(group, 16));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key an address's share is kept under: an IPv4 address as it is (an IPv4-mapped IPv6 one as
 * IPv4), an IPv6 address as its /64 network (`2001:db8:0:1::/64`); anything else as it is.
 */
export function clientNetwork(address: string): string {
  if (isIPv4(address)) return address;
  if (!isIPv6(address)) return address;
  const groups = ipv6Groups(address);
  const mapped = groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff;
  if (mapped) {
    const [high = 0, low = 0] = groups.slice(6);
    return [high >> 8, high & 0xff, low >> 8, low & 0xff].join('.');
  }
  return `${groups
    .slice(0, 4)
    .map((group) => group.toString(16))
    .join(':')}::/64`;
}
