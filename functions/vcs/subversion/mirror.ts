/**
 * Fetching: the origin's revisions into the local mirror `<workDir>/raw.svn`, in bounded revision
 * ranges (`svnrdump dump` through the job's guard → `svnadmin load`), resumable across chunks.
 */
import { rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { checkSize, fileSize, oversizeError } from '../limits.ts';
import { OriginFailed, type RawJob, type RawProgress } from '../origin.ts';
import { decodeXml, runSvn, SvnFailed } from './command.ts';
import { fetchFailure, localFailure } from './errors.ts';
import type { StepClock, SvnOrigin, SvnState, svnCursor } from './state.ts';
import type { Transport } from './transport.ts';
import { pegged } from './url.ts';

export const rawSvnPath = (workDir: string): string => join(workDir, 'raw.svn');

/** A network tool run through the job's guard, with its credentials. */
export type RemoteSvn = (
  tool: 'svn' | 'svnrdump',
  args: readonly string[],
  timeoutMs: number,
  onLine?: (line: string) => void,
) => Promise<Buffer>;

/** One chunk's view of the job: what its steps share. */
export interface SvnChunk {
  readonly job: RawJob;
  readonly url: URL;
  readonly home: string;
  readonly mirror: string;
  readonly maxBytes: number;
  readonly transport: Transport;
  readonly remote: RemoteSvn;
  readonly state: SvnState;
  readonly cursor: ReturnType<typeof svnCursor>;
  readonly clock: StepClock;
  readonly onProgress: (progress: RawProgress) => void;
}

/** `svn info` of the URL: the repository's UUID, its youngest revision, the URL's path in it. */
export async function originInfo(url: string, svn: (args: string[]) => Promise<Buffer>): Promise<SvnOrigin> {
  const xml = (await svn(['info', '--xml', '--', pegged(url)])).toString('utf8');
  const uuid = /<uuid>([0-9a-fA-F-]{36})<\/uuid>/.exec(xml)?.[1];
  const youngest = Number(/<entry\b[^>]*\brevision="(\d+)"/.exec(xml)?.[1]);
  const relative = /<relative-url>\^\/?([^<]*)<\/relative-url>/.exec(xml)?.[1];
  if (uuid === undefined || !Number.isInteger(youngest) || relative === undefined)
    throw new OriginFailed('The Subversion origin did not describe its repository');
  return { uuid, youngest, path: decodeURIComponent(decodeXml(relative)) };
}

/**
 * Loads the origin's revisions into the mirror until it is complete or the chunk's budget is
 * spent; true when the mirror holds every revision. A range the origin did not send in time is
 * lost: the next chunk asks for fewer revisions at a time.
 */
export async function mirrorRevisions(chunk: SvnChunk, origin: SvnOrigin): Promise<boolean> {
  const { job, mirror, home, state, cursor, clock, transport } = chunk;
  state.loaded = await ensureMirror(mirror, origin.uuid, home);
  while (state.loaded < origin.youngest) {
    const remaining = clock.remaining();
    if (!clock.mayStep()) break;
    await checkSize(mirror, chunk.maxBytes);
    // The first range also carries revision 0's properties and always reaches revision 1.
    const from = state.loaded === 0 ? 0 : state.loaded + 1;
    const to =
      state.mode === 'whole'
        ? origin.youngest
        : Math.min(origin.youngest, Math.max(1, from + state.revs - 1));
    const dump = join(job.workDir, 'chunk.dump');
    await rm(dump, { force: true }); // a killed chunk's partial dump
    const stepStarted = Date.now();
    let dumped = from - 1;
    try {
      await chunk.remote(
        'svnrdump',
        ['dump', '--incremental', '-r', `${from}:${to}`, '-F', dump, '--', transport.url],
        Math.max(remaining, clock.plan.minStepTimeoutMs),
        (line) => {
          // Dumped is not yet loaded: a dumped revision counts a little less than a loaded one.
          const revision = Number(/^\* Dumped revision (\d+)\.$/.exec(line.trim())?.[1]);
          if (revision > dumped) dumped = revision;
          const percent = Math.floor((85 * revision) / Math.max(origin.youngest, 1));
          if (!(percent > state.percent)) return;
          state.percent = percent;
          chunk.onProgress({ commitCount: state.commitCount, percent });
        },
      );
    } catch (error) {
      await rm(dump, { force: true });
      if (!(error instanceof SvnFailed && error.timedOut))
        throw fetchFailure(error, transport, job, chunk.url, Math.min(dumped + 1, to));
      // The range is lost: fewer revisions per step from now on.
      if (state.mode === 'whole') state.mode = 'ranges';
      else if (state.revs > 1) state.revs = Math.max(1, Math.floor(state.revs / 2));
      else throw new OriginFailed('The origin did not send the history in time');
      await cursor.save(job.workDir, state);
      return false;
    }
    if ((await fileSize(dump)) > chunk.maxBytes) throw oversizeError(chunk.maxBytes);
    try {
      await loadRange(mirror, dump, home, clock.stepTimeout());
      await packShards(mirror, home, clock.stepTimeout());
    } catch (error) {
      if (!(error instanceof SvnFailed && error.timedOut))
        throw localFailure(error, 'Fetching', job, { revision: (await youngestOf(mirror, home)) + 1 });
      // Whole revisions stay loaded (svnadmin commits one by one); the rest comes in ranges.
      state.mode = 'ranges';
      state.revs = Math.max(1, Math.floor(state.revs / 2));
    } finally {
      await rm(dump, { force: true });
    }
    clock.stepDone(stepStarted);
    state.loaded = await youngestOf(mirror, home);
    if (state.mode === 'ranges') state.revs = Math.ceil(state.revs * clock.plan.growth);
    state.commitCount = state.loaded;
    state.percent = Math.max(state.percent, Math.floor((90 * state.loaded) / Math.max(origin.youngest, 1)));
    await cursor.save(job.workDir, state);
    chunk.onProgress({ commitCount: state.commitCount, percent: state.percent });
  }
  return state.loaded >= origin.youngest;
}

/**
 * Creates the mirror with the origin's UUID if needed; returns its youngest revision. It is made
 * beside its place and renamed into it, so a worker killed while making it leaves no half-made
 * repository where the next try would take it for a whole one.
 */
async function ensureMirror(mirror: string, uuid: string, home: string): Promise<number> {
  try {
    await stat(join(mirror, 'format'));
  } catch {
    const making = `${mirror}.making`;
    await Promise.all([
      rm(mirror, { recursive: true, force: true }),
      rm(making, { recursive: true, force: true }),
    ]);
    await runSvn('svnadmin', ['create', '--', making], { cwd: home, home, timeoutMs: 60_000 });
    await runSvn('svnadmin', ['setuuid', '--', making, uuid], { cwd: home, home, timeoutMs: 60_000 });
    await rename(making, mirror);
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

/**
 * Packs the mirror's full shards (1,000 revisions each) into one file apiece: the size check
 * before each range walks the mirror's files, two a revision when unpacked (0.5 s at 20,000
 * revisions here; on EFS each is a round trip). Only shards not packed yet are read, and svn reads
 * a packed repository as any other.
 */
const packShards = (mirror: string, home: string, timeoutMs: number) =>
  runSvn('svnadmin', ['pack', '-q', '--', mirror], { cwd: home, home, timeoutMs });

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
