/**
 * How svn reaches a Subversion origin: only through the guard proxy of its job, pinned to the
 * origin's host and port (`pinned-origin.ts`), and what to tell the user when the guard refused
 * something. svn follows an http redirect to any URL it can open (`svn://`, `svn+ssh://`,
 * `file://`, another host, carrying the credentials), so no redirect away from the origin reaches
 * it; `svn://` becomes `svn+guard://`, whose tunnel is the guard's program (`runSvn`).
 */
import { tmpdir } from 'node:os';
import { interceptionCertificate } from '../interception-certificate.ts';
import { type DialTarget, type Guard, type Refusal, startGuardProxy } from '../network-guard.ts';
import { ForbiddenAddress, OriginFailed } from '../origin.ts';
import { pinnedOrigin } from '../pinned-origin.ts';

export interface Transport {
  /** The URL svn is given: the origin's, with `svn://` as `svn+guard://` (the guard's tunnel). */
  readonly url: string;
  readonly proxyPort: number;
  /** https: the proxy's certificate for this origin, the only one svn trusts. */
  readonly trustedCertificate: string | undefined;
  readonly refusals: readonly Refusal[];
  readonly dialled: readonly DialTarget[];
  /** The origin's host[:port], for messages. */
  readonly host: string;
  readonly idleTimeoutMs: number;
  close(): Promise<void>;
}

/** The network settings of one adapter: the guard's idle limit and the test CA hook. */
export interface SvnNetwork {
  readonly idleTimeoutMs: number;
  readonly extraCa: readonly string[] | undefined;
}

/**
 * The guard proxy of one job's svn calls, pinned to the origin's host and port: every svn
 * connection (http(s) through the proxy, `svn://` through the tunnel) goes there and nowhere else,
 * and a redirect leaving the origin is refused before svn can follow it. An https origin is
 * intercepted with a certificate made for this job.
 */
export async function openTransport(url: URL, guard: Guard, network: SvnNetwork): Promise<Transport> {
  const certificate = url.protocol === 'https:' ? await interceptionCertificate(url.hostname) : undefined;
  const proxy = await startGuardProxy(guard, {
    pin: pinnedOrigin(url, certificate && { ...certificate, extraCa: network.extraCa }),
    idleTimeoutMs: network.idleTimeoutMs,
  });
  return {
    url: url.protocol === 'svn:' ? `svn+guard:${url.toString().slice('svn:'.length)}` : url.toString(),
    proxyPort: proxy.port,
    trustedCertificate: certificate?.cert,
    refusals: proxy.refusals,
    dialled: proxy.dialled,
    host: url.host,
    idleTimeoutMs: network.idleTimeoutMs,
    close: proxy.close,
  };
}

/** What svn printed, as the user's own URL scheme: `svn+guard://` is the guard's name for `svn://`. */
export const userScheme = (text: string) => text.replace(/svn\+guard:\/\//g, 'svn://');

/**
 * A line svn printed, fit to show: the user's `svn://` scheme, and nothing of this machine's disk
 * (a `file://` URL, the job's or the temp directory's paths), so it tells nothing about local files.
 */
export function publicLine(line: string, workDir: string): string {
  let shown = userScheme(line).replace(/file:\/\/[^\s']*/g, 'file://…');
  for (const local of new Set([workDir, tmpdir()])) shown = shown.split(local).join('…');
  return shown;
}

export const idleFailure = (transport: Transport) =>
  new OriginFailed(
    `The origin ${transport.host} sent nothing for ${Math.round(transport.idleTimeoutMs / 1000)} seconds`,
  );

/** What the guard proxy refused, as the user may read it; it explains svn's failure first. */
export function guardRefusal(transport: Transport): Error | undefined {
  const forbidden = transport.refusals.find((entry) => entry.reason === 'forbidden');
  if (forbidden) return new ForbiddenAddress(forbidden.address ?? forbidden.host);
  const redirect = transport.refusals.find((entry) => entry.reason === 'redirect');
  if (redirect) return redirectRefused(redirect.location ?? 'invalid:');
  if (transport.refusals.some((entry) => entry.reason === 'off_origin'))
    return new OriginFailed(`The origin sent Subversion to another host than ${transport.host}`);
  if (transport.refusals.some((entry) => entry.reason === 'idle')) return idleFailure(transport);
  return undefined;
}

/**
 * A redirect away from the origin (scheme, host or port): a Subversion import follows none (svn
 * would follow one to `svn://`, `file://`, anywhere, and hand it the credentials). An importable
 * target is named, so the user can import from it; any other is named by its scheme only.
 */
export function redirectRefused(location: string): OriginFailed {
  let target: URL;
  try {
    target = new URL(location);
  } catch {
    return new OriginFailed('The origin redirected to an invalid URL');
  }
  if (target.protocol === 'http:' || target.protocol === 'https:' || target.protocol === 'svn:') {
    target.username = '';
    target.password = '';
    return new OriginFailed(
      `The origin redirected to ${target.href.slice(0, 500)}: a Subversion import does not follow a redirect to another origin; import from that URL instead`,
    );
  }
  return new OriginFailed(
    `The origin redirected to a ${target.protocol.slice(0, 20)} URL, which a Subversion import does not follow`,
  );
}
