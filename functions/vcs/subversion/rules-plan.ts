/**
 * The conversion's rules on disk: planned from the complete mirror (`rules.ts`: standard when the
 * project has a `trunk` at the youngest revision), saved with the layout they were written for (and
 * the revision it was read to) and the branches and tags they rename. A sync plans them again,
 * reading the layout of its new revisions only, and compares (`convert.ts`).
 */
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RefRename } from '#domain/ref-names';
import { saveRenamedRefs } from '../findings.ts';
import { runSvn } from './command.ts';
import type { HistoryScan } from './history-findings.ts';
import { conversionRules, type LayoutNames, layoutNames } from './rules.ts';
import type { SvnOrigin } from './state.ts';

/** svn-all-fast-export's rules file, in the work directory. */
export const RULES_FILE = 'svn.rules';
/** The layout the rules were written for, kept for the end of the conversion. */
const LAYOUT_FILE = 'svn-layout.json';

/** Where the rules are planned: the complete mirror of the origin, in a work directory. */
export interface RulesAt {
  readonly mirror: string;
  readonly workDir: string;
  readonly home: string;
  readonly origin: SvnOrigin;
  readonly timeoutMs: number;
}

export interface PlannedRules {
  readonly rules: string;
  readonly renames: readonly RefRename[];
  /** The standard layout's names; undefined without a `trunk` (the whole tree is `main`). */
  readonly layout: LayoutNames | undefined;
  /** The youngest revision the layout was read to. */
  readonly through: number;
}

/** A saved layout and the revision it was read to. */
export type SavedLayout = Pick<PlannedRules, 'layout' | 'through'>;

/** The imported project's path in the repository, no slashes around. */
export const projectPath = (origin: SvnOrigin) => origin.path.replace(/^\/+|\/+$/g, '');

/**
 * The rules for the mirror as it is now, writing into the Git repository `output`; given the
 * standard layout `known` read to an earlier revision, only the revisions after it are read.
 */
export async function planRules(at: RulesAt, output: string, known?: SavedLayout): Promise<PlannedRules> {
  const path = projectPath(at.origin);
  const top = (
    await runSvn('svnlook', ['tree', '--non-recursive', '--', at.mirror, `/${path}`], {
      cwd: at.home,
      home: at.home,
      timeoutMs: 60_000,
    })
  )
    .toString('utf8')
    .split('\n')
    .map((line) => line.trim());
  const through = at.origin.youngest;
  if (!top.includes('trunk/'))
    return { ...conversionRules(path, undefined, output), layout: undefined, through };
  const earlier = known?.layout;
  const read = await layoutNames(
    at.mirror,
    path,
    at.home,
    earlier === undefined ? 0 : (known?.through ?? 0) + 1,
  );
  const layout =
    earlier === undefined
      ? read
      : {
          branches: [...new Set([...earlier.branches, ...read.branches])],
          tags: [...new Set([...earlier.tags, ...read.tags])],
        };
  return { ...conversionRules(path, layout, output), layout, through };
}

export async function saveRules(workDir: string, planned: PlannedRules): Promise<void> {
  await writeFile(join(workDir, RULES_FILE), planned.rules);
  await writeFile(
    join(workDir, LAYOUT_FILE),
    JSON.stringify({ layout: planned.layout ?? null, through: planned.through }),
  );
  await saveRenamedRefs(workDir, planned.renames);
}

/** The rules the conversion was written with, if any. */
export const savedRules = (workDir: string): Promise<string | undefined> =>
  readFile(join(workDir, RULES_FILE), 'utf8').catch(() => undefined);

export const savedLayout = async (workDir: string): Promise<LayoutNames | undefined> =>
  (await readLayout(workDir)).layout ?? undefined;

/** The saved layout with the revision it was read to; undefined when saved without it. */
export async function savedLayoutThrough(workDir: string): Promise<SavedLayout | undefined> {
  const saved = await readLayout(workDir).catch(() => undefined);
  if (saved === undefined || typeof saved.through !== 'number') return undefined;
  return { layout: saved.layout ?? undefined, through: saved.through };
}

const readLayout = async (workDir: string) =>
  JSON.parse(await readFile(join(workDir, LAYOUT_FILE), 'utf8')) as {
    layout: LayoutNames | null;
    through?: number;
  };

/** The history scan that goes with the planned rules (from the revision the caller says). */
export const scanOf = (at: RulesAt, planned: PlannedRules): Omit<HistoryScan, 'from'> => ({
  mirror: at.mirror,
  workDir: at.workDir,
  home: at.home,
  path: projectPath(at.origin),
  standard: planned.layout !== undefined,
  uuid: at.origin.uuid,
  timeoutMs: at.timeoutMs,
});
