/**
 * The TFVC origin adapter: reads a Team Foundation Version Control project over the Azure DevOps /
 * TFS REST API (`api-version=6.0`: generally available for every endpoint used here on Azure
 * DevOps Services and on Azure DevOps Server 2020 and later) and replays its changesets, oldest
 * first, into `<workDir>/raw.git` with `git fast-import`, a bounded batch at a time.
 *
 * What is imported: the whole `$/{project}` tree becomes the branch `main`, with paths relative to
 * `$/{project}/`. TFVC branches are folders and stay folders (no Git branches are made). Git has
 * no empty directories: an empty folder holds an empty `.gitignore` when the owner chose
 * `keepEmptyDirectories`, else it is left out (`working-tree.ts`). One commit per changeset: author =
 * the changeset's author, committer = who checked it in, date = its creation date (UTC), message =
 * its comment (CRLF → LF, ending with a newline; an empty comment becomes `Changeset N`).
 * Shelvesets, labels, check-in notes, work item links and changes outside `$/{project}` are not
 * imported, nor files at paths Git cannot store (`.git/config`, `.hg/hgrc` in any spelling:
 * `#domain/unstorable-paths`); the import report lists the labels, shelvesets, branch relations,
 * empty folders and left-out paths (`server-findings.ts`, `unstorable.ts`, `#vcs/findings`). Identities: `authors.ts`. A failure names its step,
 * the changeset and path where known, and the server's own words (`api-client.ts`). A sync replays
 * only the changesets after the last one imported (`follow.ts`).
 *
 * Network: every request goes through `guardedRequest`; credentials (any username, a personal
 * access token as password) travel only in a Basic `Authorization` header, which is never logged
 * nor put in a message. 401 or 203 (Azure DevOps' anonymous sign-in page) means "credentials
 * needed or refused".
 */
import { mkdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_IMPORT_CHOICES } from '#domain/imports';
import { type AdapterOptions, adapterSetup } from '#vcs/adapter-options';
import { saveFinding } from '#vcs/findings';
import { prepareHome } from '#vcs/git-command';
import { directorySize, oversizeError, tooManyObjectsError } from '#vcs/limits';
import { objectTotal } from '#vcs/object-database';
import { type OriginAccess, type OriginAdapter, rawRepositoryPath, startAfresh } from '#vcs/origin';
import { saveNumberedRevisions } from '#vcs/revision-map';
import { writeWhole } from '../whole-file.ts';
import { apiClient } from './api-client.ts';
import { tfvcAuthors } from './authors.ts';
import { type Changeset, listChangesets, type Paging, readChangeset } from './changesets.ts';
import { checkedUrl, detectTfvc, locate } from './detect.ts';
import { listingAfter, reopenTfvc } from './follow.ts';
import {
  checkLimits,
  commitCommands,
  ensureBareRepository,
  fastImport,
  filesOf,
  replayedSoFar,
} from './replay.ts';
import { saveServerFindings } from './server-findings.ts';
import { cursor, LISTING_FILE, type ListedChangeset, MARKS_FILE, type TfvcState } from './state.ts';
import { recordUnstorable } from './unstorable.ts';
import { commitFolders, loadWorkingTree, saveNextFolders } from './working-tree.ts';

export interface TfvcAdapterOptions extends AdapterOptions {
  /** `$top` of a changeset or change listing (default 100, the API's documented default page). */
  readonly pageSize?: number;
  /** File contents held in memory before a batch goes to fast-import (default 64 MiB). */
  readonly batchBytes?: number;
  /** Time limit of one request (default 60 s; detection probes 30 s). */
  readonly requestTimeoutMs?: number;
  /** Projects of a collection probed for TFVC during detection (default 200). */
  readonly maxProbedProjects?: number;
}

export function tfvcAdapter(options: TfvcAdapterOptions = {}): OriginAdapter {
  const { maxBytes, maxObjects, guardFor } = adapterSetup(options);
  const pageSize = options.pageSize ?? 100;
  const batchBytes = options.batchBytes ?? 64 * 1024 * 1024;
  const clientFor = (access: OriginAccess, timeoutMs: number) =>
    apiClient(access, guardFor(access), timeoutMs);

  const importRawChunk: OriginAdapter['importRawChunk'] = async (job, budgetMs, onProgress) => {
    const started = Date.now();
    const state = await cursor.load(job.workDir);
    if (state.done) return { done: true, commitCount: state.replayed, percent: 100 };
    const api = clientFor(job, options.requestTimeoutMs ?? 60_000);
    const home = join(job.workDir, 'home');
    const repo = rawRepositoryPath(job.workDir);
    await prepareHome(home, [repo]);
    await ensureBareRepository(repo, home);

    if (state.collection === undefined || state.project === undefined) {
      const located = await locate(checkedUrl(job.url, job), job, api);
      state.collection = located.collection;
      state.project = located.project;
      await cursor.save(job.workDir, state);
    }
    const { collection, project } = state as Required<Pick<TfvcState, 'collection' | 'project'>>;
    const host = new URL(collection).hostname;
    const listingFile = join(job.workDir, LISTING_FILE);
    if (!state.listed) {
      const listing =
        state.last === undefined
          ? await listChangesets(api, job, collection, project, pageSize)
          : await listingAfter(api, job, { workDir: job.workDir, collection, project }, pageSize, state.last);
      if (listing === undefined) {
        // A sync whose last changeset the origin no longer has as imported: the whole history again.
        await startAfresh(job.workDir);
        await mkdir(job.workDir, { recursive: true });
        return importRawChunk(job, Math.max(0, budgetMs - (Date.now() - started)), onProgress);
      }
      await writeWhole(listingFile, JSON.stringify(listing));
      state.listed = true;
      state.total = listing.length;
      await cursor.save(job.workDir, state);
    }
    const listing = JSON.parse(await readFile(listingFile, 'utf8')) as ListedChangeset[];
    state.total = listing.length;
    // A chunk killed after fast-import finished but before the cursor was saved: raw.git knows.
    state.replayed = await replayedSoFar(repo, home, job.workDir, listing, state.replayed);

    if (!state.serverFindings) {
      await saveServerFindings(job.workDir, { api, access: job, collection, project, pageSize });
      state.serverFindings = true;
      await cursor.save(job.workDir, state);
    }

    const keepEmpty = (job.choices ?? DEFAULT_IMPORT_CHOICES).keepEmptyDirectories;
    const tip = listing[state.replayed - 1]?.id ?? null;
    const tree = await loadWorkingTree(job.workDir, tip, await filesOf(repo, home));
    const saveEmptyDirectories = () =>
      saveFinding(
        job.workDir,
        'empty_directories',
        tree.emptyFolders().map((path) => ({ path, ref: 'refs/heads/main', kept: keepEmpty })),
      );
    const paging: Paging = { size: pageSize, tokens: false };
    const percent = () => (state.total ? Math.min(99, Math.floor((state.replayed / state.total) * 100)) : 0);
    let batches = 0;
    while (state.replayed < listing.length) {
      if (batches > 0 && Date.now() - started >= budgetMs) break;
      await checkLimits(repo, maxBytes, maxObjects);
      const stream: Buffer[] = [];
      let streamBytes = 0;
      let objects = 0;
      let next = state.replayed;
      let lastRead = state.last;
      const read: Pick<Changeset, 'id' | 'unstorable'>[] = [];
      while (next < listing.length) {
        const listed = listing[next];
        if (listed === undefined) break;
        const changeset = await readChangeset(api, job, collection, project, listed, paging);
        read.push({ id: changeset.id, unstorable: changeset.unstorable });
        const { changes: _, unstorable: __, ...listedPart } = changeset;
        lastRead = { ...listedPart, truncated: false };
        const previous = next > 0 ? listing[next - 1]?.id : undefined;
        const commit = commitCommands(changeset, previous, host, tree, keepEmpty);
        stream.push(...commit.parts);
        streamBytes += commit.bytes;
        objects += commit.objects;
        next += 1;
        if (streamBytes >= batchBytes || Date.now() - started >= budgetMs) break;
      }
      const size = await directorySize(repo);
      if (size + streamBytes > maxBytes) throw oversizeError(maxBytes);
      if ((await objectTotal(repo)) + objects > maxObjects) throw tooManyObjectsError();
      stream.push(Buffer.from('done\n'));
      const last = listing[next - 1];
      if (last !== undefined) await saveNextFolders(job.workDir, last.id, tree);
      await recordUnstorable(job.workDir, read);
      await fastImport(repo, home, join(job.workDir, MARKS_FILE), Buffer.concat(stream));
      state.replayed = next;
      state.last = lastRead;
      batches += 1;
      await cursor.save(job.workDir, state);
      await commitFolders(job.workDir);
      await saveEmptyDirectories();
      onProgress({ commitCount: state.replayed, percent: percent() });
    }
    state.done = state.replayed >= listing.length;
    if (state.done) {
      await saveEmptyDirectories();
      await recordUnstorable(job.workDir, []);
      await saveNumberedRevisions(repo, join(job.workDir, MARKS_FILE));
    }
    await cursor.save(job.workDir, state);
    return {
      done: state.done,
      commitCount: state.replayed,
      percent: state.done ? 100 : percent(),
    };
  };

  return {
    vcs: 'tfvc',

    async detect(access) {
      const url = checkedUrl(access.url, access);
      const api = clientFor(access, options.requestTimeoutMs ?? 30_000);
      return detectTfvc(url, access, api, options.maxProbedProjects ?? 200);
    },

    importRawChunk,

    authors: tfvcAuthors,

    reopen: reopenTfvc,
  };
}
