/**
 * Converting: the complete mirror `raw.svn` into `raw.git` with svn-all-fast-export (local, no
 * network), resumable by revision ranges (its `--max-rev` and `--resume-from`); the rules are
 * fixed by the first step, when the mirror is complete.
 */
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { DEFAULT_IMPORT_CHOICES, type ImportChoices } from '#domain/imports';
import { countCommits, GitFailed, runGit } from '../git-command.ts';
import { isBareRepository } from '../http-backend.ts';
import { checkObjects, checkSize } from '../limits.ts';
import { OriginFailed, rawRepositoryPath } from '../origin.ts';
import { runSvn, SvnFailed } from './command.ts';
import { localFailure } from './errors.ts';
import { forgetDeletedRefs, saveConversionFindings, settleDeletedRefs } from './finish.ts';
import { IDENTITY_MAP, scanHistory } from './history-findings.ts';
import type { SvnChunk } from './mirror.ts';
import { saveSvnRevisions } from './revisions.ts';
import { svnRefs } from './rules.ts';
import {
  planRules,
  projectPath,
  RULES_FILE,
  type RulesAt,
  savedLayout,
  savedLayoutThrough,
  savedRules,
  saveRules,
  scanOf,
} from './rules-plan.ts';
import type { SvnOrigin } from './state.ts';

/** The Git repository svn-all-fast-export writes (named in the rules, created in its cwd). */
const OUTPUT_NAME = 'raw.git';
/**
 * Present while a range converts: found at the start of a step, it says a range was killed
 * mid-way (the worker died) and raw.git may hold part of it, which cannot be resumed.
 */
const CONVERTING = 'converting-range';

/**
 * Converts the mirror's revisions until all are in `raw.git` or the chunk's budget is spent; true
 * when the conversion is complete (HEAD `main`, commits counted). A range
 * killed by its time limit is not resumed: the conversion starts again in smaller ranges.
 */
export async function convertRevisions(
  chunk: SvnChunk,
  origin: SvnOrigin,
  maxObjects: number,
): Promise<boolean> {
  try {
    return await convertSteps(chunk, origin, maxObjects);
  } catch (error) {
    throw localFailure(error, 'Converting', chunk.job);
  }
}

async function convertSteps(chunk: SvnChunk, origin: SvnOrigin, maxObjects: number): Promise<boolean> {
  const { job, mirror, home, state, cursor, clock } = chunk;
  const gitRepo = rawRepositoryPath(job.workDir);
  const choices = job.choices ?? DEFAULT_IMPORT_CHOICES;
  if (await exists(join(job.workDir, CONVERTING))) {
    // A range killed with its worker: the conversion starts again from the complete mirror.
    await forgetConversion(job.workDir);
    state.converted = 0;
    await cursor.save(job.workDir, state);
    await rm(join(job.workDir, CONVERTING), { force: true });
  }
  if (state.converted > 0 && state.scanned < origin.youngest) {
    // A sync: the mirror gained revisions. The conversion goes on unless its rules change.
    const scan = { mirror, workDir: job.workDir, home, origin, timeoutMs: clock.stepTimeout() };
    if (await continueRules(scan, state.scanned)) state.scanned = origin.youngest;
    else state.converted = 0;
    await cursor.save(job.workDir, state);
  }
  if (state.converted === 0) {
    await checkSize(mirror, chunk.maxBytes);
    await writeRules({ mirror, workDir: job.workDir, home, origin, timeoutMs: clock.stepTimeout() });
    state.scanned = origin.youngest;
    await cursor.save(job.workDir, state);
  }
  while (state.converted < origin.youngest) {
    const remaining = clock.remaining();
    if (!clock.mayStep()) break;
    const to =
      state.mode === 'whole'
        ? origin.youngest
        : Math.min(origin.youngest, state.converted + state.convertRevs);
    const stepStarted = Date.now();
    await writeFile(join(job.workDir, CONVERTING), `${state.converted + 1}-${to}\n`);
    try {
      await convertRange(job.workDir, mirror, origin.uuid, home, {
        from: state.converted + 1,
        to: to === origin.youngest ? undefined : to,
        timeoutMs: Math.max(remaining, clock.plan.minStepTimeoutMs),
        emptyDirs: choices.keepEmptyDirectories,
      });
    } catch (error) {
      if (!(error instanceof SvnFailed && error.timedOut)) throw error;
      // A killed conversion is not resumed: start it again, in smaller ranges.
      await forgetConversion(job.workDir);
      if (state.mode === 'ranges' && state.convertRevs <= 1)
        throw new OriginFailed('Converting the Subversion history took too long');
      state.convertRevs =
        state.mode === 'whole'
          ? Math.max(1, Math.ceil(origin.youngest / 4))
          : Math.max(1, Math.floor(state.convertRevs / 2));
      state.mode = 'ranges';
      state.converted = 0;
      await cursor.save(job.workDir, state);
      await rm(join(job.workDir, CONVERTING), { force: true });
      return false;
    }
    clock.stepDone(stepStarted);
    state.converted = to;
    if (state.mode === 'ranges') state.convertRevs = Math.ceil(state.convertRevs * clock.plan.growth);
    state.percent = Math.max(
      state.percent,
      90 + Math.floor((9 * state.converted) / Math.max(origin.youngest, 1)),
    );
    await cursor.save(job.workDir, state);
    await rm(join(job.workDir, CONVERTING), { force: true });
    chunk.onProgress({ commitCount: state.commitCount, percent: state.percent });
  }
  if (state.converted < origin.youngest) return false;
  await finishConversion(job.workDir, mirror, origin, home, choices);
  await checkObjects(gitRepo, maxObjects);
  state.commitCount = await countCommits(gitRepo, home);
  return true;
}

/** What a conversion that cannot be resumed leaves: raw.git and svn-all-fast-export's log. */
async function forgetConversion(workDir: string): Promise<void> {
  await rm(rawRepositoryPath(workDir), { recursive: true, force: true });
  await rm(join(workDir, `log-${OUTPUT_NAME}`), { force: true });
}

const exists = (path: string) =>
  stat(path).then(
    () => true,
    () => false,
  );

/**
 * The conversion rules of the imported path (`rules.ts`) written afresh, with the renamed
 * branches and tags and the history scanned for the report (`history-findings.ts`), so a
 * conversion started again rewrites all of it from the same complete mirror.
 */
async function writeRules(at: RulesAt): Promise<void> {
  const { workDir } = at;
  await rm(rawRepositoryPath(workDir), { recursive: true, force: true });
  await rm(join(workDir, `log-${OUTPUT_NAME}`), { force: true });
  await forgetDeletedRefs(workDir);
  const planned = await planRules(at, OUTPUT_NAME);
  await saveRules(workDir, planned);
  await scanHistory({ ...scanOf(at, planned), from: 0 });
}

/**
 * A sync's mirror gained revisions: when the rules for the whole mirror are the ones the
 * conversion was written with (the branch and tag names new revisions brought need no rule of
 * their own), the layout is updated from the new revisions and only they are scanned; false when the rules
 * changed and the conversion must start again.
 */
async function continueRules(at: RulesAt, scanned: number): Promise<boolean> {
  const known = await savedLayoutThrough(at.workDir);
  const planned = await planRules(at, OUTPUT_NAME, known?.through === scanned ? known : undefined);
  if ((await savedRules(at.workDir)) !== planned.rules) return false;
  await saveRules(at.workDir, planned);
  await scanHistory({ ...scanOf(at, planned), from: scanned + 1 });
  return true;
}

/**
 * Revisions `from`..`to` (to the youngest without `to`) of raw.svn into raw.git with
 * svn-all-fast-export (local, no network), run in the work directory so its output repository
 * (named by the rules) lands at `raw.git` and its resume log beside it. `--identity-domain <uuid>`
 * makes every author `user <user@uuid>`; the identity map names the revisions without author.
 * `--empty-dirs` puts an empty `.gitignore` in each empty directory.
 */
async function convertRange(
  workDir: string,
  mirror: string,
  uuid: string,
  home: string,
  range: { from: number; to: number | undefined; timeoutMs: number; emptyDirs: boolean },
): Promise<void> {
  // Where it is: each revision it starts (`Exporting revision N`) and each path it converts.
  const at: { revision?: number; path?: string } = {};
  let pending = '';
  const follow = (chunk: Buffer) => {
    const lines = (pending + chunk.toString('utf8')).split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) {
      const revision = /^Exporting revision (\d+)/.exec(line)?.[1];
      if (revision !== undefined) {
        at.revision = Number(revision);
        at.path = undefined;
      }
      const path = / from SVN (\S.*?) to \S/.exec(line)?.[1];
      if (path !== undefined) at.path = path;
    }
  };
  try {
    await runSvn(
      'svn-all-fast-export',
      [
        '--identity-domain',
        uuid,
        '--identity-map',
        join(workDir, IDENTITY_MAP),
        '--rules',
        join(workDir, RULES_FILE),
        '--svn-ignore',
        ...(range.emptyDirs ? ['--empty-dirs'] : []),
        '--stats',
        // Our own time limit applies; its default kills a slow final fast-import checkpoint after 30 s.
        '--fast-import-timeout',
        '0',
        ...(range.from > 1 ? ['--resume-from', String(range.from)] : []),
        ...(range.to !== undefined ? ['--max-rev', String(range.to)] : []),
        mirror,
      ],
      { cwd: workDir, home, timeoutMs: range.timeoutMs, onStdout: follow },
    );
  } catch (error) {
    if (error instanceof SvnFailed && error.timedOut) throw error;
    throw localFailure(error, 'Converting', { workDir }, at);
  }
  // svn-all-fast-export exits 0 even when git fast-import died; its log says so.
  const log = await readFile(join(workDir, `log-${OUTPUT_NAME}`), 'utf8').catch(() => '');
  const fatal =
    /^fatal: (.*)$/m.exec(log)?.[1] ?? (/crash report/.test(log) ? 'git fast-import failed' : undefined);
  if (fatal !== undefined)
    throw localFailure(
      new GitFailed(['fast-import'], 128, `fatal: ${fatal}`, false),
      'Converting',
      { workDir },
      at,
    );
}

/**
 * After the last range: HEAD is `main`, the findings only the converted history knows are saved
 * and the refs of what was deleted settled; svn-all-fast-export's resume files stay for a sync
 * (`follow.ts`). Safe to run again: findings are rewritten whole, refs settled idempotently.
 */
async function finishConversion(
  workDir: string,
  mirror: string,
  origin: SvnOrigin,
  home: string,
  choices: ImportChoices,
): Promise<void> {
  const gitRepo = rawRepositoryPath(workDir);
  if (!(await isBareRepository(gitRepo))) {
    // Nothing matched the rules (an empty repository): an empty raw history.
    await mkdir(gitRepo, { recursive: true });
    await runGit(['init', '--bare', '--quiet', gitRepo], {
      cwd: workDir,
      home,
      transport: 'local',
      timeoutMs: 60_000,
    });
  }
  await gitLocal(gitRepo, home, ['symbolic-ref', 'HEAD', 'refs/heads/main']);
  const layout = await savedLayout(workDir);
  await saveConversionFindings({
    workDir,
    mirror,
    home,
    path: projectPath(origin),
    refs: svnRefs(layout),
    standard: layout !== undefined,
    log: join(workDir, `log-${OUTPUT_NAME}`),
    keepDeletedRefs: choices.keepDeletedRefs,
  });
  // svn-all-fast-export's resume files (its log and marks) stay: a sync continues from them.
  await settleDeletedRefs(gitRepo, home, choices.keepDeletedRefs);
  await saveSvnRevisions(workDir, OUTPUT_NAME, home, choices.keepDeletedRefs);
}

const gitLocal = (repo: string, home: string, args: readonly string[]) =>
  runGit(args, { cwd: repo, home, transport: 'local', timeoutMs: 600_000 });
