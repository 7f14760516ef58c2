/**
 * Detection of a Subversion origin: mod_dav_svn's answer to `OPTIONS` over http(s), svnserve's
 * greeting over `svn://` (both through the network guard, from Node), then the project layout
 * from `svn ls` through the job's guard proxy.
 */
import { createHmac } from 'node:crypto';
import type { Socket } from 'node:net';
import { type Guard, guardedConnect, guardedRequest } from '../network-guard.ts';
import { type Detection, ForbiddenAddress, type OriginAccess } from '../origin.ts';
import { redirectAway } from '../pinned-origin.ts';
import { decodeXml, runSvn, SvnFailed } from './command.ts';
import { isAuthError } from './errors.ts';
import {
  guardRefusal,
  openTransport,
  redirectRefused,
  type SvnNetwork,
  type Transport,
} from './transport.ts';
import { pegged } from './url.ts';

const OPTIONS_BODY =
  '<?xml version="1.0" encoding="utf-8"?><D:options xmlns:D="DAV:"><D:activity-collection-set/></D:options>';
const SVN_DAV_NAMESPACE = 'http://subversion.tigris.org/xmlns/dav/svn/';

/** mod_dav_svn answers `OPTIONS` with its capabilities in `DAV:` headers (and `SVN-*` headers). */
export async function detectHttp(
  url: URL,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
  probeRedirect = false,
): Promise<Detection> {
  const headers: Record<string, string> = {
    'content-type': 'text/xml',
    'user-agent': 'SVN/1.14.2 (source-import)',
  };
  if (access.credentials)
    headers.authorization = `Basic ${Buffer.from(`${access.credentials.username}:${access.credentials.password}`).toString('base64')}`;
  let response: Awaited<ReturnType<typeof guardedRequest>>;
  try {
    response = await guardedRequest(url.toString(), guard, {
      method: 'OPTIONS',
      headers,
      body: OPTIONS_BODY,
      timeoutMs,
      maxBytes: 64 * 1024,
      sameOriginOnly: true,
    });
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return { kind: 'nothing' };
  }
  // A redirect away from the origin is not followed (svn would follow it anywhere): when it points
  // where only Subversion goes, or at a Subversion server, the user is told to import from there.
  const location = response.headers.location;
  const away = location === undefined ? undefined : redirectAway(url, location);
  if (away) {
    if (away.protocol !== 'http:' && away.protocol !== 'https:') throw redirectRefused(away.href);
    if (!probeRedirect) return { kind: 'nothing' };
    const target = await detectHttp(away, { ...access, credentials: undefined }, guard, timeoutMs).catch(
      () => ({ kind: 'nothing' }) as const,
    );
    if (target.kind === 'found') throw redirectRefused(away.href);
    return { kind: 'nothing' };
  }
  if (response.status === 401) return { kind: 'needs_auth' };
  const dav = [response.headers.dav ?? []].flat().join(',');
  const svnHeaders = Object.keys(response.headers).some((name) => name.startsWith('svn-'));
  return response.status === 200 && (dav.includes(SVN_DAV_NAMESPACE) || svnHeaders)
    ? { kind: 'found', vcs: 'subversion' }
    : { kind: 'nothing' };
}

/**
 * The svn protocol's greeting (ra_svn): the server greets, the client names the URL, the server
 * offers its auth mechanisms for the repository (or fails: no repository there). ANONYMOUS offered
 * → found; otherwise credentials are needed (found when some were given: the raw step checks them).
 */
export async function detectSvnProtocol(
  url: URL,
  access: OriginAccess,
  guard: Guard,
  timeoutMs = 30_000,
): Promise<Detection> {
  let socket: Socket;
  try {
    ({ socket } = await guardedConnect(url.hostname, url.port === '' ? 3690 : Number(url.port), guard));
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return { kind: 'nothing' };
  }
  const reader = itemReader(socket, timeoutMs);
  try {
    const greeting = await reader.next();
    if (!isSuccess(greeting)) return { kind: 'nothing' };
    const word = (text: string) => `${Buffer.byteLength(text)}:${text}`;
    socket.write(
      `( 2 ( edit-pipeline svndiff1 absent-entries depth mergeinfo log-revprops ) ${word(url.toString())} ${word('SVN/1.14.2 source-import')} ( ) ) `,
    );
    const auth = await reader.next();
    if (!isSuccess(auth)) return { kind: 'nothing' };
    const mechanisms = (Array.isArray(auth[1]) && Array.isArray(auth[1][0]) ? auth[1][0] : []).map(String);
    if (mechanisms.includes('ANONYMOUS')) {
      socket.write('( ANONYMOUS ( 0: ) ) ');
      if (!isSuccess(await reader.next())) return { kind: 'nothing' };
      return isSuccess(await reader.next()) ? { kind: 'found', vcs: 'subversion' } : { kind: 'nothing' };
    }
    if (!access.credentials) return { kind: 'needs_auth' };
    if (!mechanisms.includes('CRAM-MD5')) return { kind: 'found', vcs: 'subversion' };
    socket.write('( CRAM-MD5 ( ) ) ');
    const step = await reader.next();
    const challenge = Array.isArray(step) && Array.isArray(step[1]) ? String(step[1][0] ?? '') : '';
    const digest = createHmac('md5', access.credentials.password).update(challenge).digest('hex');
    const answer = `${access.credentials.username} ${digest}`;
    socket.write(`${Buffer.byteLength(answer)}:${answer} `);
    return isSuccess(await reader.next()) ? { kind: 'found', vcs: 'subversion' } : { kind: 'needs_auth' };
  } catch {
    return { kind: 'nothing' };
  } finally {
    socket.destroy();
  }
}

type Item = string | Item[];

const isSuccess = (item: Item | undefined): item is Item[] => Array.isArray(item) && item[0] === 'success';

/**
 * Reads top-level items of svn's wire format: `( ... )` lists, numbers, words and `N:bytes`
 * strings, separated by whitespace. At most 64 KiB is kept; a slow or silent server times out.
 */
function itemReader(socket: Socket, timeoutMs: number) {
  let buffer = Buffer.alloc(0);
  let waiting: (() => void) | undefined;
  let failed: Error | undefined;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    if (buffer.length > 65_536) failed = new Error('too long');
    waiting?.();
  });
  const stop = (error: Error) => {
    failed ??= error;
    waiting?.();
  };
  socket.on('close', () => stop(new Error('closed')));
  socket.on('error', (error) => stop(error));
  const timer = setTimeout(() => stop(new Error('timeout')), timeoutMs);
  socket.once('close', () => clearTimeout(timer));

  /** One item from `buffer` at `at`: the item and where it ends, or undefined when incomplete. */
  const parse = (at: number): { item: Item; end: number } | undefined => {
    let i = at;
    while (i < buffer.length && /\s/.test(String.fromCharCode(buffer[i] ?? 0))) i++;
    if (i >= buffer.length) return undefined;
    const char = String.fromCharCode(buffer[i] ?? 0);
    if (char === '(') {
      const list: Item[] = [];
      let j = i + 1;
      for (;;) {
        while (j < buffer.length && /\s/.test(String.fromCharCode(buffer[j] ?? 0))) j++;
        if (j >= buffer.length) return undefined;
        if (buffer[j] === 0x29) return { item: list, end: j + 1 };
        const next = parse(j);
        if (!next) return undefined;
        list.push(next.item);
        j = next.end;
      }
    }
    if (char === ')') throw new Error('unbalanced');
    let j = i;
    while (j < buffer.length && /[0-9A-Za-z-]/.test(String.fromCharCode(buffer[j] ?? 0))) j++;
    if (j >= buffer.length) return undefined;
    const token = buffer.subarray(i, j).toString('latin1');
    if (j === i) throw new Error('bad token');
    if (buffer[j] === 0x3a && /^\d+$/.test(token)) {
      const end = j + 1 + Number(token);
      if (end > buffer.length) return undefined;
      return { item: buffer.subarray(j + 1, end).toString('utf8'), end };
    }
    return { item: token, end: j };
  };

  return {
    async next(): Promise<Item> {
      for (;;) {
        const parsed = parse(0);
        if (parsed) {
          buffer = buffer.subarray(parsed.end);
          return parsed.item;
        }
        if (failed) throw failed;
        await new Promise<void>((resolve) => {
          waiting = resolve;
        });
        waiting = undefined;
      }
    },
  };
}

/**
 * The project layout, from `svn ls` of the URL (through the guard): a `trunk` directory → one
 * standard project; otherwise the children that have a `trunk` of their own → a choice of projects;
 * otherwise the whole tree is one project. When the listing fails (credentials refused, say) the
 * raw step reports it; detection still says Subversion.
 */
export async function detectLayout(
  url: string,
  access: OriginAccess,
  guard: Guard,
  network: SvnNetwork,
  home: string,
): Promise<Detection> {
  const found: Detection = { kind: 'found', vcs: 'subversion' };
  let transport: Transport;
  try {
    transport = await openTransport(new URL(url), guard, network);
  } catch {
    return found;
  }
  const base = transport.url.replace(/\/+$/, '');
  const list = (targets: readonly string[]) =>
    runSvn('svn', ['list', '--xml', '--', ...targets.map(pegged)], {
      cwd: home,
      home,
      credentials: access.credentials,
      proxyPort: transport.proxyPort,
      trustedCertificate: transport.trustedCertificate,
      idleSeconds: network.idleTimeoutMs / 1000,
      timeoutMs: 60_000,
      maxStdoutBytes: 16 * 1024 * 1024,
    }).then((out) => listedDirectories(out.toString('utf8')));
  try {
    const root = (await list([base])).get(listedKey(base)) ?? [];
    if (root.includes('trunk') || root.length === 0) return found;
    const children = root.slice(0, 100);
    const childUrl = (child: string) => `${base}/${encodeURIComponent(child)}`;
    const listed = await list(children.map(childUrl));
    const projects = children.filter((child) => listed.get(listedKey(childUrl(child)))?.includes('trunk'));
    if (projects.length === 0) return found;
    return {
      kind: 'multiple',
      choices: projects.map((child) => ({ vcs: 'subversion' as const, humanName: child, path: child })),
    };
  } catch (error) {
    const refused = guardRefusal(transport);
    if (refused) throw refused;
    if (error instanceof SvnFailed && isAuthError(error.stderr) && !access.credentials)
      return { kind: 'needs_auth' };
    return found;
  } finally {
    await transport.close();
  }
}

/** How `svn list --xml` names a target (decoded), so a listing is found whatever encoding asked for it. */
function listedKey(url: string): string {
  const trimmed = url.replace(/\/+$/, '');
  try {
    return decodeURIComponent(trimmed);
  } catch {
    return trimmed;
  }
}

/** `svn list --xml`: the directories listed under each target path, by `listedKey`. */
function listedDirectories(xml: string): Map<string, string[]> {
  const lists = new Map<string, string[]>();
  for (const match of xml.matchAll(/<list\s+path="([^"]*)"\s*>([\s\S]*?)<\/list>/g)) {
    const dirs = [...(match[2] ?? '').matchAll(/<entry\s+kind="dir"\s*>\s*<name>([^<]*)<\/name>/g)].map(
      (entry) => decodeXml(entry[1] ?? ''),
    );
    lists.set(listedKey(decodeXml(match[1] ?? '')), dirs);
  }
  return lists;
}
