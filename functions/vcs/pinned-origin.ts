/**
 * A guard proxy pinned to one origin (Subversion's): the tool may reach that host and port only,
 * and never follow a redirect away from it. svn follows a redirect to any URL it can open —
 * `svn://`, `svn+ssh://`, `file://` — outside any proxy, so the proxy is where redirects are seen
 * and stopped. For https the proxy must see inside TLS: it presents a certificate of its own, made
 * per job and trusted only by that job's svn calls, and opens its own TLS to the origin, verified
 * against the system's CAs.
 */
// Pure URL rules (the certificate the proxy presents is made in `interception-certificate.ts`),
// so that `guardedRequest` loads no process API into a route's zip function.

export interface PinnedOrigin {
  /** `svn:` is reached by CONNECT only (svn's guard tunnel), `http:` by absolute-URI requests only. */
  readonly protocol: 'http:' | 'https:' | 'svn:';
  /** Lower case, IPv6 without brackets. */
  readonly host: string;
  readonly port: number;
  /** https only: what the proxy presents to the tool, and extra CAs it trusts upstream (tests). */
  readonly interception?: Interception;
}

export interface Interception {
  readonly key: string;
  readonly cert: string;
  readonly extraCa?: readonly string[];
}

const DEFAULT_PORTS: Readonly<Record<string, number>> = { 'http:': 80, 'https:': 443, 'svn:': 3690 };

export const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();

export const portOf = (url: URL): number =>
  url.port === '' ? (DEFAULT_PORTS[url.protocol] ?? 0) : Number(url.port);

/** The origin of an http(s) or svn URL, as the proxy pins it. */
export function pinnedOrigin(url: URL, interception?: Interception): PinnedOrigin {
  const protocol = url.protocol;
  if (protocol !== 'http:' && protocol !== 'https:' && protocol !== 'svn:')
    throw new Error(`cannot pin ${protocol}`);
  return { protocol, host: bare(url.hostname), port: portOf(url), interception };
}

export const isPinnedTarget = (pin: PinnedOrigin, host: string, port: number): boolean =>
  bare(host) === pin.host && port === pin.port;

/** Where a redirect of `from` points when it leaves `from`'s origin (scheme, host or port); else undefined. */
export function redirectAway(from: URL, location: string): URL | undefined {
  let next: URL;
  try {
    next = new URL(location, from);
  } catch {
    return new URL('invalid:');
  }
  const same =
    next.protocol === from.protocol &&
    bare(next.hostname) === bare(from.hostname) &&
    portOf(next) === portOf(from);
  return same ? undefined : next;
}
