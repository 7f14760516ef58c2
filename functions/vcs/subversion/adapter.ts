/**
 * The Subversion origin adapter: detects a repository over http(s) (mod_dav_svn) or `svn://`
 * (svnserve) (`detect.ts`), copies its revisions into a local mirror `<workDir>/raw.svn` in bounded
 * revision ranges (`mirror.ts`), then converts the mirror into `<workDir>/raw.git` with
 * svn-all-fast-export (`convert.ts`). Every later step works on `raw.git` as for Git.
 *
 * Layout (of the URL, or of the chosen project below it): with a `trunk` directory the standard
 * layout — `trunk` → branch `main` (GitHub's default branch name), `branches/X` → branch `X`,
 * `tags/X` → annotated tag `X` (a name Git refuses renamed, see `rules.ts`), anything else
 * beside them is dropped; without one, the whole tree is branch `main`. `svn:ignore` becomes
 * `.gitignore`, `svn:executable` the executable mode, a copy from another branch a merge commit;
 * a revision that touches nothing imported makes no commit. Empty directories are dropped, or hold
 * an empty `.gitignore` (the owner's choice); a deleted branch or tag is kept as the tag
 * `backups/<name>@<rev>`, or dropped (the owner's choice). What Git cannot hold is listed in the
 * import report (`history-findings.ts`, `finish.ts`).
 *
 * Authors: `authors.ts`. Following the origin after the import (a sync continues the mirror and
 * the conversion): `follow.ts`.
 *
 * Network: Node's probes use `guardedRequest` / `guardedConnect`; svn talks only through its job's
 * guard proxy, pinned to the origin, and follows no redirect away from it (`transport.ts`).
 * `svn+ssh://` is refused by `checkOriginUrl`: ssh cannot be routed through the guard.
 */
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdapterOptions, adapterSetup } from '../adapter-options.ts';
import { prepareHome } from '../git-command.ts';
import { type OriginAdapter, rawRepositoryPath, startAfresh } from '../origin.ts';
import { subversionAuthors } from './authors.ts';
import { runSvn } from './command.ts';
import { convertRevisions } from './convert.ts';
import { detectHttp, detectLayout, detectSvnProtocol } from './detect.ts';
import { classify } from './errors.ts';
import { historyKept, reopenMirror } from './follow.ts';
import { mirrorRevisions, originInfo, rawSvnPath, type SvnChunk } from './mirror.ts';
import { DEFAULT_SVN_CHUNK_PLAN, StepClock, type SvnChunkPlan, svnCursor } from './state.ts';
import { openTransport, type SvnNetwork } from './transport.ts';
import { checkedUrl, originUrl } from './url.ts';

export interface SubversionAdapterOptions extends AdapterOptions {
  readonly svnPlan?: Partial<SvnChunkPlan>;
  readonly probeTimeoutMs?: number;
  /** Test hook: CAs the guard trusts for an https origin besides the system's. */
  readonly extraCa?: readonly string[];
}

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
        await prepareHome(home, []);
        return await detectLayout(url.toString(), access, guard, network, home);
      } finally {
        await rm(home, { recursive: true, force: true });
      }
    },

    async importRawChunk(job, budgetMs, onProgress) {
      const clock = new StepClock(Date.now(), budgetMs, plan);
      const url = originUrl(job);
      const home = join(job.workDir, 'home');
      const cursor = svnCursor(budgetMs >= plan.wholeMinBudgetMs ? 'whole' : 'ranges', plan);
      const state = await cursor.load(job.workDir);
      if (state.done) return { done: true, commitCount: state.commitCount, percent: 100 };
      await prepareHome(home, [rawRepositoryPath(job.workDir)]);
      const transport = await openTransport(url, guardFor(job), network);
      const chunk: SvnChunk = {
        job,
        url,
        home,
        mirror: rawSvnPath(job.workDir),
        maxBytes,
        transport,
        state,
        cursor,
        clock,
        onProgress,
        remote: (tool, args, timeoutMs, onLine) =>
          runSvn(tool, args, {
            cwd: home,
            home,
            credentials: job.credentials,
            proxyPort: transport.proxyPort,
            trustedCertificate: transport.trustedCertificate,
            idleSeconds: network.idleTimeoutMs / 1000,
            timeoutMs,
            onProgress: onLine,
          }),
      };
      const partial = () => ({ done: false, commitCount: state.commitCount, percent: state.percent });
      try {
        if (state.origin === null || state.following) {
          const now = await originInfo(transport.url, (args) => chunk.remote('svn', args, 120_000));
          if (
            state.following &&
            !(await historyKept(state, now, chunk.mirror, home, chunk.remote, transport.url))
          ) {
            // The origin's history was replaced: this sync imports it whole, from the next chunk.
            await startAfresh(job.workDir);
            await mkdir(job.workDir, { recursive: true });
            return { done: false, commitCount: null, percent: 0 };
          }
          state.origin = now;
          state.following = false;
          await cursor.save(job.workDir, state);
        }
        const origin = state.origin;
        if (!(await mirrorRevisions(chunk, origin))) return partial();
        if (!(await convertRevisions(chunk, origin, maxObjects))) return partial();
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

    authors: subversionAuthors,

    reopen: reopenMirror,
  };
}
