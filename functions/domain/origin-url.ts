/**
 * `vcs_url` is hostile input. These are the pure rules: which URLs an import may name at all
 * (checked at `PUT`, before any network use), and which addresses the importer may never connect
 * to (checked again on the address actually dialled, by the network guard in `functions/vcs`).
 */
import { BlockList, isIP } from 'node:net';
import type { Vcs } from './imports.ts';

/** URL schemes per origin type; without a `vcs` (detection) any of them. */
const SCHEMES: Readonly<Record<Vcs, readonly string[]>> = {
  git: ['http:', 'https:', 'git:'],
  subversion: ['http:', 'https:', 'svn:'],
  mercurial: ['http:', 'https:'],
  tfvc: ['http:', 'https:'],
};
const ANY_SCHEME = [...new Set(Object.values(SCHEMES).flat())];

export const MAX_ORIGIN_URL_LENGTH = 2048;

/** Every range that is not the public internet: loopback, private, link-local, CGNAT, multicast, reserved. */
const FORBIDDEN = new BlockList();
for (const [network, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv4');
}
for (const [network, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['100::', 64],
  ['2001::', 23],
  ['2001:db8::', 32],
  ['64:ff9b:1::', 48], // local-use NAT64 (RFC 8215): translates into the operator's own network
  ['::ffff:0:0:0', 96], // SIIT IPv4-translated addresses (RFC 2765): the same, stateless
  ['fc00::', 7], // unique local, includes EC2's metadata address fd00:ec2::254
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  FORBIDDEN.addSubnet(network, prefix, 'ipv6');
}

/** The IPv4 address an IPv6 address embeds (mapped, compatible, NAT64, 6to4), if any. */
function embeddedIpv4(address: string): string | undefined {
  const lower = address.toLowerCase();
  const dotted = /^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  if (dotted?.[1]) return dotted[1];
  const groups = expandIpv6(lower);
  if (!groups) return undefined;
  const toV4 = (high: number, low: number) => `${high >> 8}.${high & 255}.${low >> 8}.${low & 255}`;
  const [g0, g1, g2, g3, g4, g5, g6, g7] = groups as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  // ::ffff:a.b.c.d (mapped) and ::a.b.c.d (compatible, deprecated)
  if (g0 === 0 && g1 === 0 && g2 === 0 && g3 === 0 && g4 === 0 && (g5 === 0xffff || g5 === 0))
    return toV4(g6, g7);
  // 64:ff9b::/96 (NAT64)
  if (g0 === 0x64 && g1 === 0xff9b && g2 === 0 && g3 === 0 && g4 === 0 && g5 === 0) return toV4(g6, g7);
  // 2002::/16 (6to4): the IPv4 address is in groups 1 and 2
  if (g0 === 0x2002) return toV4(g1, g2);
  return undefined;
}

/** The eight 16-bit groups of an IPv6 address written in hex groups (no dotted tail), or undefined. */
function expandIpv6(address: string): number[] | undefined {
  if (address.includes('.')) return undefined;
  const [head = '', tail] = address.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const missing = 8 - left.length - right.length;
  if (tail === undefined ? missing !== 0 : missing < 1) return undefined;
  const groups = [...left, ...Array(tail === undefined ? 0 : missing).fill('0'), ...right].map((group) =>
    Number.parseInt(group, 16),
  );
  return groups.every((group) => Number.isInteger(group) && group >= 0 && group <= 0xffff)
    ? groups
    : undefined;
}

/**
 * Whether the importer must never connect to this IP address. `allowed` lists exact addresses an
 * operator allowed on purpose (the local stack and tests allow 127.0.0.1 and ::1 only).
 */
export function isForbiddenAddress(address: string, allowed: readonly string[] = []): boolean {
  const bare = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const family = isIP(bare);
  if (family === 0) return true;
  if (allowed.some((entry) => sameAddress(entry, bare))) return false;
  if (family === 4) return FORBIDDEN.check(bare, 'ipv4');
  const v4 = embeddedIpv4(bare);
  // An address that embeds an IPv4 address reaches that address: judge it as that address.
  if (v4 !== undefined) return isForbiddenAddress(v4, allowed);
  return FORBIDDEN.check(bare, 'ipv6');
}

function sameAddress(a: string, b: string): boolean {
  if (a === b) return true;
  const ga = expandIpv6(a.toLowerCase());
  const gb = expandIpv6(b.toLowerCase());
  return ga !== undefined && gb !== undefined && ga.every((group, i) => group === gb[i]);
}

export type OriginUrlProblem =
  | 'too_long'
  | 'not_a_url'
  | 'option_like'
  | 'scheme'
  | 'credentials'
  | 'no_host'
  | 'forbidden_address';

export type OriginUrlCheck =
  | { readonly ok: true; readonly url: URL }
  | { readonly ok: false; readonly problem: OriginUrlProblem; readonly message: string };

const LOOPBACK_NAMES = /^(?:localhost|localhost\.localdomain|ip6-localhost|ip6-loopback)$|\.localhost$/i;

/**
 * Checks a `vcs_url` before anything uses it: a plain absolute URL of a scheme the origin type
 * speaks, no embedded credentials (they belong in `vcs_username`/`vcs_password`, which are stored
 * sealed), and no literal address (or loopback name) the importer may not reach. Names are checked
 * again on the address they resolve to when the importer connects.
 */
export function checkOriginUrl(
  raw: string,
  vcs: Vcs | null,
  allowed: readonly string[] = [],
): OriginUrlCheck {
  const fail = (problem: OriginUrlProblem, message: string): OriginUrlCheck => ({
    ok: false,
    problem,
    message,
  });
  if (raw.length > MAX_ORIGIN_URL_LENGTH)
    return fail('too_long', `vcs_url is longer than ${MAX_ORIGIN_URL_LENGTH} characters`);
  if (/^\s*-/.test(raw)) return fail('option_like', 'vcs_url must not start with "-"');
  // `ext::cmd`, `fd::3`, `file:///x`, `/path`, `host:path` (scp-like) are not absolute URLs of an allowed scheme.
  if (/^[a-z][a-z0-9+.-]*::/i.test(raw))
    return fail('scheme', 'vcs_url uses a transport that is not allowed');
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  if (/[\s\u0000-\u001f\u007f]/.test(raw))
    return fail('not_a_url', 'vcs_url must not contain spaces or control characters');
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return fail('not_a_url', 'vcs_url is not an absolute URL');
  }
  const schemes = vcs === null ? ANY_SCHEME : SCHEMES[vcs];
  if (!schemes.includes(url.protocol)) {
    return fail('scheme', `vcs_url must use ${schemes.map((s) => s.replace(/:$/, '')).join(', ')}`);
  }
  if (url.username !== '' || url.password !== '') {
    return fail('credentials', 'vcs_url must not contain credentials; send vcs_username and vcs_password');
  }
  const host = url.hostname.replace(/^\[|\]$/g, '');
  if (host === '') return fail('no_host', 'vcs_url has no host');
  if (
    isIP(host) !== 0
      ? isForbiddenAddress(host, allowed)
      : LOOPBACK_NAMES.test(host) && !allowed.includes(host)
  ) {
    return fail('forbidden_address', 'vcs_url points to an address the importer may not reach');
  }
  return { ok: true, url };
}
