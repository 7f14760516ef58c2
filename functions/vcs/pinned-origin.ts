/**
 * A guard proxy pinned to one origin (Subversion's): the tool may reach that host and port only,
 * and never follow a redirect away from it. svn follows a redirect to any URL it can open —
 * `svn://`, `svn+ssh://`, `file://` — outside any proxy, so the proxy is where redirects are seen
 * and stopped. For https the proxy must see inside TLS: it presents a certificate of its own, made
 * per job and trusted only by that job's svn calls, and opens its own TLS to the origin, verified
 * against the system's CAs.
 */
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { isIP } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { toolPath } from '#shared/tool-path';

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

const bare = (host: string) => host.replace(/^\[|\]$/g, '').toLowerCase();

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

/**
 * A key and self-signed certificate for `host` (its name, or its address), valid two days, made by
 * the `openssl` CLI in a private temp dir that is removed at once.
 */
export async function interceptionCertificate(host: string): Promise<{ key: string; cert: string }> {
  const name = bare(host);
  const san = isIP(name) === 0 ? `DNS:${name}` : `DNS:${name},IP:${name}`;
  const dir = await mkdtemp(join(tmpdir(), 'guard-tls-'));
  try {
    await promisify(execFile)(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '2',
        '-subj',
        '/CN=source-import guard',
        '-addext',
        `subjectAltName=${san}`,
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { env: { PATH: toolPath() }, timeout: 30_000 },
    );
    return {
      key: await readFile(join(dir, 'key.pem'), 'utf8'),
      cert: await readFile(join(dir, 'cert.pem'), 'utf8'),
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
