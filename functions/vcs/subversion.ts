/**
 * The Subversion origin adapter: detects a repository over http(s) (mod_dav_svn) or `svn://`
 * (svnserve), copies its revisions into a local mirror `<workDir>/raw.svn` in bounded revision
 * ranges (`svnrdump dump` → `svnadmin load`), then converts the mirror once into `<workDir>/raw.git`
 * with svn-all-fast-export. Every later step works on `raw.git` as for Git.
 *
 * Layout (of the URL, or of the chosen project below it): with a `trunk` directory the standard
 * layout — `trunk` → branch `main` (GitHub's default branch name), `branches/X` → branch `X`,
 * `tags/X` → annotated tag `X` (a name Git refuses renamed, see `svn-rules.ts`), anything else
 * beside them is dropped; without one, the whole tree is branch `main`. Empty directories are not
 * kept (Git has none), `svn:ignore` becomes `.gitignore`, `svn:executable` the executable mode, a
 * copy from another branch whose changes trunk took (`svn merge`) a merge commit; a revision that
 * touches nothing imported makes no commit.
 *
 * Authors: svn-all-fast-export names each commit `user <user@<repository uuid>>` (GitHub's form for
 * Subversion users, who have no email); that Git identity is the author's remote id.
 *
 * Network: Node's probes use `guardedRequest` / `guardedConnect`; svn talks only through its job's
 * guard proxy, pinned to the origin, and follows no redirect away from it (`svn-transport.ts`).
 * `svn+ssh://` is refused by `checkOriginUrl`: ssh cannot be routed through the guard.
 */
import { createHmac } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { checkOriginUrl } from '#domain/origin-url';
import { type AdapterOptions, adapterSetup } from './adapter-options.ts';
import { chunkCursor } from './chunk-cursor.ts';
import { saveRenamedRefs } from './findings.ts';
import { gitAuthors } from './git.ts';
import { GitFailed, prepareHome, runGit } from './git-command.ts';
import { checkObjects, checkSize, fileSize, oversizeError } from './limits.ts';
import { type Guard, guardedConnect, guardedRequest } from './network-guard.ts';
import {
  type Detection,
  ForbiddenAddress,
  type OriginAccess,
  type OriginAdapter,
  OriginAuthFailed,
  OriginFailed,
  type RawJob,
  rawRepositoryPath,
} from './origin.ts';
import { redirectAway } from './pinned-origin.ts';
import { decodeXml, runSvn, SvnFailed } from './svn-command.ts';
import { conversionRules, layoutNames } from './svn-rules.ts';
import {
  guardRefusal,
  idleFailure,
  openTransport,
  publicLine,
  redirectRefused,
  type SvnNetwork,
  type Transport,
} from './svn-transport.ts';

/**
 * How the revisions are cut: with a large budget one range of everything; otherwise ranges of
 * `firstRevs` revisions, growing by `growth` after each step that fits the budget.
 */
export interface SvnChunkPlan {
  readonly wholeMinBudgetMs: number;
  readonly firstRevs: number;
  readonly growth: number;
  /** A step's time limit when little budget is left (the first step of a chunk always runs). */
  readonly minStepTimeoutMs: number;
}

export const DEFAULT_SVN_CHUNK_PLAN: SvnChunkPlan = {
  wholeMinBudgetMs: 120_000,
  firstRevs: 2000,
  growth: 2,
  minStepTimeoutMs: 120_000,
};

export interface SubversionAdapterOptions extends AdapterOptions {
  readonly svnPlan?: Partial<SvnChunkPlan>;
  readonly probeTimeoutMs?: number;
  /** Test hook: CAs the guard trusts for an https origin besides the system's. */
  readonly extraCa?: readonly string[];
}

interface SvnState {
  readonly version: 1;
  mode: 'whole' | 'ranges';
  revs: number;
  /** From `svn info` of the imported URL, at the first chunk. */
  origin: { uuid: string; youngest: number; path: string } | null;
  /** Revisions in raw.svn (its youngest; revision 0 is loaded with the first range). */
  loaded: number;
  /** Revisions of raw.svn converted into raw.git so far (0: none). */
  converted: number;
  /** Revisions per conversion step in `ranges` mode. */
  convertRevs: number;
  percent: number;
  commitCount: number | null;
  done: boolean;
}

export const rawSvnPath = (workDir: string): string => join(workDir, 'raw.svn');

/** The Git repository svn-all-fast-export writes (named in the rules, created in its cwd). */
const OUTPUT_NAME = 'raw.git';

export function subversionAdapter(options: SubversionAdapterOptions = {}): OriginAdapter {
  const plan: SvnChunkPlan = { ...DEFAULT_SVN_CHUNK_PLAN, ...options.svnPlan };
  const { maxBytes, maxObjects, guardFor, idleTimeoutMs } = adapterSetup(options);
  const network: SvnNetwork = { idleTimeoutMs, extraCa: options.extraCa };

  return {
    vcs: 'subversion',

    async detect(access) {
      const url = checkedUrl(access.url, access);
      const guard = guardFor(access);
      const found =
        url.protocol === 'svn:'
          ? await detectSvnProtocol(url, access, guard, options.probeTimeoutMs)
          : await detectHttp(url, access, guard, options.probeTimeoutMs, true);
      if (found.kind !== 'found') return found;
      const home = await mkdtemp(join(tmpdir(), 'svn-detect-'));
      try {
        await prepareHome(home);
        return await detectLayout(url.toString(), access, guard, network, home);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },

    async importRawChunk(job, budgetMs, onProgress) {
      const started = Date.now();
      const url = originUrl(job);
      const home = join(job.workDir, 'home');
      const mirror = rawSvnPath(job.workDir);
      const cursor = svnCursor(budgetMs >= plan.wholeMinBudgetMs ? 'whole' : 'ranges', plan);
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareHome(home);
      const transport = await openTransport(url, guardFor(job), network);
      const credentials = job.credentials;
      const remote = (
        tool: 'svn' | 'svnrdump',
        args: readonly string[],
        timeoutMs: number,
        onLine?: (line: string) => void,
      ) =>
        runSvn(tool, args, {
          cwd: home,
          home,
          credentials,
          proxyPort: transport.proxyPort,
          trustedCertificate: transport.trustedCertificate,
          idleSeconds: network.idleTimeoutMs / 1000,
          timeoutMs,
          onProgress: onLine,
        });
      try {
        if (state.origin === null) {
          state.origin = await originInfo(transport.url, (args) => remote('svn', args, 120_000));
          await cursor.save(job.workDir, state);
        }
        const origin = state.origin;
        state.loaded = await ensureMirror(mirror, origin.uuid, home);
        let steps = 0;
        let lastStepMs = 0;
        while (state.loaded < origin.youngest) {
          const remaining = started + budgetMs - Date.now();
          if (steps > 0 && (remaining <= 0 || lastStepMs * plan.growth > remaining)) break;
          await checkSize(mirror, maxBytes);
          // The first range also carries revision 0's properties and always reaches revision 1.
          const from = state.loaded === 0 ? 0 : state.loaded + 1;
          const to =
            state.mode === 'whole'
              ? origin.youngest
              : Math.min(origin.youngest, Math.max(1, from + state.revs - 1));
          const dump = join(job.workDir, 'chunk.dump');
          await rm(dump, { force: true }); // a killed chunk's partial dump
          const stepStarted = Date.now();
          try {
            await remote(
              'svnrdump',
              ['dump', '--incremental', '-r', `${from}:${to}`, '-F', dump, '--', transport.url],
              Math.max(remaining, plan.minStepTimeoutMs),
              (line) => {
                // Dumped is not yet loaded: a dumped revision counts a little less than a loaded one.
                const dumped = Number(/^\* Dumped revision (\d+)\.$/.exec(line.trim())?.[1]);
                const percent = Math.floor((85 * dumped) / Math.max(origin.youngest, 1));
                if (!(percent > state.percent)) return;
                state.percent = percent;
                onProgress({ commitCount: state.commitCount, percent });
              },
            );
          } catch (error) {
            await rm(dump, { force: true });
            if (!(error instanceof SvnFailed && error.timedOut)) throw classify(error, transport, job, url);
            // The range is lost: fewer revisions per step from now on.
            if (state.mode === 'whole') state.mode = 'ranges';
            else if (state.revs > 1) state.revs = Math.max(1, Math.floor(state.revs / 2));
            else throw new OriginFailed('The origin did not send the history in time');
            await cursor.save(job.workDir, state);
            return { done: false, commitCount: state.commitCount, percent: state.percent };
          }
          if ((await fileSize(dump)) > maxBytes) throw oversizeError(maxBytes);
          try {
            await loadRange(
              mirror,
              dump,
              home,
              Math.max(started + budgetMs - Date.now(), plan.minStepTimeoutMs),
            );
          } catch (error) {
            if (!(error instanceof SvnFailed && error.timedOut)) throw error;
            // Whole revisions stay loaded (svnadmin commits one by one); the rest comes in ranges.
            state.mode = 'ranges';
            state.revs = Math.max(1, Math.floor(state.revs / 2));
          } finally {
            await rm(dump, { force: true });
          }
          steps += 1;
          lastStepMs = Date.now() - stepStarted;
          state.loaded = await youngestOf(mirror, home);
          if (state.mode === 'ranges') state.revs = Math.ceil(state.revs * plan.growth);
          state.commitCount = state.loaded;
          state.percent = Math.max(
            state.percent,
            Math.floor((90 * state.loaded) / Math.max(origin.youngest, 1)),
          );
          await cursor.save(job.workDir, state);
          onProgress({ commitCount: state.commitCount, percent: state.percent });
        }
        if (state.loaded < origin.youngest)
          return { done: false, commitCount: state.commitCount, percent: state.percent };

        // Conversion, resumable by revision ranges as well (svn-all-fast-export's --max-rev and
        // --resume-from); the rules are fixed by the first step, when the mirror is complete.
        const gitRepo = rawRepositoryPath(job.workDir);
        if (state.converted === 0) {
          await checkSize(mirror, maxBytes);
          await writeRules(job.workDir, mirror, origin.path, home);
        }
        while (state.converted < origin.youngest) {
          const remaining = started + budgetMs - Date.now();
          if (steps > 0 && (remaining <= 0 || lastStepMs * plan.growth > remaining)) break;
          const to =
            state.mode === 'whole'
              ? origin.youngest
              : Math.min(origin.youngest, state.converted + state.convertRevs);
          const stepStarted = Date.now();
          try {
            await convertRange(job.workDir, mirror, origin.uuid, home, {
              from: state.converted + 1,
              to: to === origin.youngest ? undefined : to,
              timeoutMs: Math.max(remaining, plan.minStepTimeoutMs),
            });
          } catch (error) {
            if (!(error instanceof SvnFailed && error.timedOut)) throw error;
            // A killed conversion is not resumed: start it again, in smaller ranges.
            await rm(gitRepo, { recursive: true, force: true });
            await rm(join(job.workDir, `log-${OUTPUT_NAME}`), { force: true });
            if (state.mode === 'ranges' && state.convertRevs <= 1)
              throw new OriginFailed('Converting the Subversion history took too long');
            state.convertRevs =
              state.mode === 'whole'
                ? Math.max(1, Math.ceil(origin.youngest / 4))
                : Math.max(1, Math.floor(state.convertRevs / 2));
            state.mode = 'ranges';
            state.converted = 0;
            await cursor.save(job.workDir, state);
            return { done: false, commitCount: state.commitCount, percent: state.percent };
          }
          steps += 1;
          lastStepMs = Date.now() - stepStarted;
          state.converted = to;
          if (state.mode === 'ranges') state.convertRevs = Math.ceil(state.convertRevs * plan.growth);
          state.percent = Math.max(
            state.percent,
            90 + Math.floor((9 * state.converted) / Math.max(origin.youngest, 1)),
          );
          await cursor.save(job.workDir, state);
          onProgress({ commitCount: state.commitCount, percent: state.percent });
        }
        if (state.converted < origin.youngest)
          return { done: false, commitCount: state.commitCount, percent: state.percent };
        await finishConversion(job.workDir, home);
        await checkObjects(gitRepo, home, maxObjects);
        state.commitCount = await countGitCommits(gitRepo, home);
        state.done = true;
        state.percent = 100;
        await cursor.save(job.workDir, state);
        return { done: true, commitCount: state.commitCount, percent: 100 };
      } catch (error) {
        throw classify(error, transport, job, url);
      } finally {
        await transport.close();
      }
    },

    async authors(job) {
      const home = join(job.workDir, 'home');
      await prepareHome(home);
      const repo = rawRepositoryPath(job.workDir);
      try {
        await stat(join(repo, 'HEAD'));
      } catch {
        return []; // converted only once every revision is in the mirror
      }
      // raw.git's identities are `user <user@uuid>` (see `convertRange`): the username is the name.
      return (await gitAuthors(repo, home)).map((author) => ({ ...author, remoteName: author.name }));
    },
  };
}

function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'subversion', access.allowedAddresses);
  if (!check.ok) {
    if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
    throw new OriginFailed(check.message);
  }
  return check.url;
}

/** The URL to import: the URL itself, or the chosen project below it. */
function originUrl(job: RawJob): URL {
  const base = checkedUrl(job.url, job);
  if (!job.choice?.path) return base;
  const root = base.toString().endsWith('/') ? base : new URL(`${base.toString()}/`);
  const path = job.choice.path
    .split('/')
    .filter((part) => part !== '')
    .map(encodeURIComponent)
    .join('/');
  return checkedUrl(new URL(path, root).toString(), job);
}

/* ------------------------------------------------------------------------------------------------
 * Detection
 * ---------------------------------------------------------------------------------------------- */

const OPTIONS_BODY =
  '<?xml version="1.0" encoding="utf-8"?><D:options xmlns:D="DAV:"><D:activity-collection-set/></D:options>';
const SVN_DAV_NAMESPACE = 'http://subversion.tigris.org/xmlns/dav/svn/';

/** mod_dav_svn answers `OPTIONS` with its capabilities in `DAV:` headers (and `SVN-*` headers). */
async function detectHttp(
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
async function detectSvnProtocol(
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
async function detectLayout(
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

/**
 * A URL as `svn` (not `svnrdump`) must be given it: svn reads the last `@` of a target as a peg
 * revision, even one percent-encoded (`team%402` is `team` at revision 2), so a path with an `@`
 * in it names another path or fails. An `@` at the end is an empty peg revision (HEAD) and makes
 * every earlier `@` part of the path. `svnrdump` takes its URL literally and must not get one.
 */
const pegged = (url: string): string => `${url}@`;

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

/* ------------------------------------------------------------------------------------------------
 * Raw step
 * ---------------------------------------------------------------------------------------------- */

/** `svn info` of the URL: the repository's UUID, its youngest revision, the URL's path in it. */
async function originInfo(
  url: string,
  svn: (args: string[]) => Promise<Buffer>,
): Promise<{ uuid: string; youngest: number; path: string }> {
  const xml = (await svn(['info', '--xml', '--', pegged(url)])).toString('utf8');
  const uuid = /<uuid>([0-9a-fA-F-]{36})<\/uuid>/.exec(xml)?.[1];
  const youngest = Number(/<entry\b[^>]*\brevision="(\d+)"/.exec(xml)?.[1]);
  const relative = /<relative-url>\^\/?([^<]*)<\/relative-url>/.exec(xml)?.[1];
  if (uuid === undefined || !Number.isInteger(youngest) || relative === undefined)
    throw new OriginFailed('The Subversion origin did not describe its repository');
  return { uuid, youngest, path: decodeURIComponent(decodeXml(relative)) };
}

/** Creates the mirror with the origin's UUID if needed; returns its youngest revision. */
async function ensureMirror(mirror: string, uuid: string, home: string): Promise<number> {
  try {
    await stat(join(mirror, 'format'));
  } catch {
    await rm(mirror, { recursive: true, force: true });
    await runSvn('svnadmin', ['create', '--', mirror], { cwd: home, home, timeoutMs: 60_000 });
    await runSvn('svnadmin', ['setuuid', '--', mirror, uuid], { cwd: home, home, timeoutMs: 60_000 });
  }
  // A load killed mid-way leaves a stale transaction at most; committed revisions are whole.
  return youngestOf(mirror, home);
}

const youngestOf = async (mirror: string, home: string) =>
  Number(
    (await runSvn('svnlook', ['youngest', '--', mirror], { cwd: home, home, timeoutMs: 60_000 }))
      .toString()
      .trim(),
  );

/** Loads a dump into the mirror (`svnadmin load` commits revision by revision). */
const loadRange = (mirror: string, dump: string, home: string, timeoutMs: number) =>
  runSvn(
    'svnadmin',
    [
      'load',
      '-q',
      '--force-uuid',
      // Old repositories hold CRLF in svn:ignore or svn:log that today's svn refuses to load.
      '--normalize-props',
      '--bypass-prop-validation',
      // A scratch copy: the origin still has it, and a killed process loses nothing flushed.
      '--no-flush-to-disk',
      '-F',
      dump,
      '--',
      mirror,
    ],
    { cwd: home, home, timeoutMs },
  );

/**
 * The conversion rules of the imported path (`svn-rules.ts`): standard when it has a `trunk` at the
 * youngest revision. The renamed branches and tags go to `renamed-refs.json` at the same time, so a
 * conversion started again rewrites both from the same complete mirror.
 */
async function writeRules(workDir: string, mirror: string, originPath: string, home: string): Promise<void> {
  const path = originPath.replace(/^\/+|\/+$/g, '');
  const top = (
    await runSvn('svnlook', ['tree', '--non-recursive', '--', mirror, `/${path}`], {
      cwd: home,
      home,
      timeoutMs: 60_000,
    })
  )
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim());
  await rm(rawRepositoryPath(workDir), { recursive: true, force: true });
  await rm(join(workDir, `log-${OUTPUT_NAME}`), { force: true });
  const layout = top.includes('trunk/') ? await layoutNames(mirror, path, home) : undefined;
  const { rules, renames } = conversionRules(path, layout, OUTPUT_NAME);
  await writeFile(join(workDir, 'svn.rules'), rules);
  await saveRenamedRefs(workDir, renames);
}

/**
 * Revisions `from`..`to` (to the youngest without `to`) of raw.svn into raw.git with
 * svn-all-fast-export (local, no network), run in the work directory so its output repository
 * (named by the rules) lands at `raw.git` and its resume log beside it. `--identity-domain <uuid>`
 * makes every author `user <user@uuid>`.
 */
async function convertRange(
  workDir: string,
  mirror: string,
  uuid: string,
  home: string,
  range: { from: number; to: number | undefined; timeoutMs: number },
): Promise<void> {
  await runSvn(
    'svn-all-fast-export',
    [
      '--identity-domain',
      uuid,
      '--rules',
      join(workDir, 'svn.rules'),
      '--svn-ignore',
      '--stats',
      // Our own time limit applies; its default kills a slow final fast-import checkpoint after 30 s.
      '--fast-import-timeout',
      '0',
      ...(range.from > 1 ? ['--resume-from', String(range.from)] : []),
      ...(range.to !== undefined ? ['--max-rev', String(range.to)] : []),
      mirror,
    ],
    { cwd: workDir, home, timeoutMs: range.timeoutMs, maxStdoutBytes: 64 * 1024 * 1024 },
  );
  // svn-all-fast-export exits 0 even when git fast-import died; its log says so.
  const log = await readFile(join(workDir, `log-${OUTPUT_NAME}`), 'utf8').catch(() => '');
  const fatal =
    /^fatal: (.*)$/m.exec(log)?.[1] ?? (/crash report/.test(log) ? 'git fast-import failed' : undefined);
  if (fatal !== undefined)
    throw new OriginFailed(`Converting the Subversion history failed: ${fatal.slice(0, 300)}`);
}

/** After the last range: svn-all-fast-export's resume files go, HEAD is `main`. */
async function finishConversion(workDir: string, home: string): Promise<void> {
  const gitRepo = rawRepositoryPath(workDir);
  await rm(join(workDir, `log-${OUTPUT_NAME}`), { force: true });
  for (const file of ['marks', 'annotatedTags', 'branchNotes'])
    await rm(join(gitRepo, `${file}-${OUTPUT_NAME}`), { force: true });
  try {
    await stat(join(gitRepo, 'HEAD'));
  } catch {
    // Nothing matched the rules (an empty repository): an empty raw history.
    await mkdir(gitRepo, { recursive: true });
    await runGit(['init', '--bare', '--quiet', gitRepo], {
      cwd: workDir,
      home,
      transport: 'local',
      timeoutMs: 60_000,
    });
  }
  await runGit(['symbolic-ref', 'HEAD', 'refs/heads/main'], {
    cwd: gitRepo,
    home,
    transport: 'local',
    timeoutMs: 60_000,
  });
  await keepDeletedTags(gitRepo, home);
}

/**
 * svn-all-fast-export keeps a deleted branch as the tag `backups/<name>@<rev>`, but a deleted tag
 * (or a branch replaced in place) as `refs/backups/r<rev>/tags/<name>`, which is neither a branch
 * nor a tag and so was never published: the tag's earlier version vanished. Those refs become
 * `backups/<name>@<rev>` tags too, one rule for everything deleted.
 */
async function keepDeletedTags(gitRepo: string, home: string): Promise<void> {
  const refs = (
    await gitLocal(gitRepo, home, ['for-each-ref', '--format=%(refname) %(objectname)', 'refs/backups/'])
  )
    .toString()
    .split('\n')
    .filter(Boolean);
  const moves = refs.flatMap((line) => {
    const [ref = '', oid = ''] = line.split(' ');
    const match = /^refs\/backups\/r(\d+)\/(?:heads|tags)\/(.+)$/.exec(ref);
    if (!match) return [];
    return [`create refs/tags/backups/${match[2]}@${match[1]} ${oid}`, `delete ${ref} ${oid}`];
  });
  if (moves.length === 0) return;
  await runGit(['update-ref', '--stdin'], {
    cwd: gitRepo,
    home,
    transport: 'local',
    timeoutMs: 60_000,
    input: `${moves.join('\n')}\n`,
  });
}

const gitLocal = (repo: string, home: string, args: readonly string[]) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000 });

const countGitCommits = async (repo: string, home: string) => {
  const refs = (await gitLocal(repo, home, ['for-each-ref', '--count=1', '--format=%(refname)']))
    .toString()
    .trim();
  if (refs === '') return 0;
  return Number((await gitLocal(repo, home, ['rev-list', '--all', '--count'])).toString().trim());
};

/* ------------------------------------------------------------------------------------------------
 * Errors and state
 * ---------------------------------------------------------------------------------------------- */

const isAuthError = (text: string) =>
  /E170001|E215004|Authentication error|Authorization failed|Password incorrect|Username not found/i.test(
    text,
  ) ||
  (/E170013/.test(text) && /\b401\b/.test(text));

/**
 * A failed step, as the user may read it: the guard's refusal first, then svn's error codes mapped
 * to a few plain cases; never a credential (runSvn already removed the password).
 */
function classify(error: unknown, transport: Transport, job: RawJob, url: URL): Error {
  const refused = guardRefusal(transport);
  if (refused) return refused;
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  if (error instanceof GitFailed) return new OriginFailed('Converting the Subversion history failed');
  if (!(error instanceof SvnFailed)) return new OriginFailed('The import failed unexpectedly');
  if (error.tool === 'svn-all-fast-export' || error.tool === 'svnadmin' || error.tool === 'svnlook')
    return new OriginFailed('Converting the Subversion history failed');
  if (error.timedOut) return new OriginFailed('The origin timed out');
  const text = error.stderr;
  if (isAuthError(text))
    return new OriginAuthFailed(
      job.credentials === undefined
        ? 'The origin requires a username and password'
        : 'The origin refused the username and password',
    );
  const shown = new URL(url.toString());
  shown.username = '';
  shown.password = '';
  if (transport.refusals.some((entry) => entry.reason === 'unreachable'))
    return new OriginFailed(`The origin ${url.host} could not be reached`);
  // E210005 svnserve: no repository; E000002 mod_dav_svn: no such filesystem; E175003 not DAV;
  // E170000 / W170000 / E200009: the path does not exist in the repository.
  if (
    /E210005|E000002|E175003|[EW]170000|E200009|E160013|No repository found|non-existent|\b404\b/.test(text)
  )
    return new OriginFailed(`No Subversion repository was found at ${shown.toString()}`);
  // svn's http-timeout: as the guard's idle limit.
  if (/E000110|E670008|timed out|timeout/i.test(text)) return idleFailure(transport);
  // Connection refused, reset, timed out, host or network unreachable, name not resolved, closed.
  if (/E000111|E000104|E000110|E000113|E000101|E670002|E670008|E210002|E120108|E175012/.test(text))
    return new OriginFailed(`The origin ${url.host} could not be reached`);
  let line =
    text
      .split('\n')
      .map((entry) => entry.trim())
      .filter((entry) => /^svn\w*: E\d+/.test(entry))
      .at(-1) ?? 'svn failed';
  if (job.credentials) line = line.split(job.credentials.password).join('***');
  return new OriginFailed(`Reading from the origin failed: ${publicLine(line, job.workDir).slice(0, 300)}`);
}

const svnCursor = (mode: SvnState['mode'], plan: SvnChunkPlan) =>
  chunkCursor<SvnState>('raw-svn-state.json', () => ({
    version: 1,
    mode,
    revs: plan.firstRevs,
    origin: null,
    loaded: 0,
    converted: 0,
    convertRevs: plan.firstRevs,
    percent: 0,
    commitCount: null,
    done: false,
  }));
