/**
 * The findings of a job (`functions/domain/import-report.ts`): what its adapter could not carry
 * over as it was, one file per kind in `<workDir>/findings/<kind>.json` as `{count, listed}`.
 * Each kind is written whole by the step that knows it (a restarted chunk or attempt rewrites it),
 * so a kind's file exists exactly when the adapter looked for it; the raw step stores them all
 * where the API reads the import report.
 */
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  type Finding,
  type FindingEntry,
  type FindingKind,
  type Findings,
  findingOf,
  isFindingKind,
  renameEntry,
} from '#domain/import-report';
import type { RefRename } from '#domain/ref-names';

const FINDINGS_DIR = 'findings';

/** Replaces the job's findings of one kind (`count` when more were found than `entries` holds). */
export async function saveFinding(
  workDir: string,
  kind: FindingKind,
  entries: readonly FindingEntry[],
  count = entries.length,
): Promise<void> {
  const dir = join(workDir, FINDINGS_DIR);
  await mkdir(dir, { recursive: true });
  const file = join(dir, `${kind}.json`);
  await writeFile(`${file}.new`, `${JSON.stringify(findingOf(entries, count), null, 1)}\n`);
  await rename(`${file}.new`, file);
}

/** Every origin name that did not arrive under the ref it asked for (`domain/ref-names.ts`). */
export const saveRenamedRefs = (workDir: string, renames: readonly RefRename[]): Promise<void> =>
  saveFinding(workDir, 'renamed_refs', renames.map(renameEntry));

/** The job's findings so far: every kind its adapter has looked for. */
export async function loadFindings(workDir: string): Promise<Findings> {
  const dir = join(workDir, FINDINGS_DIR);
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return {};
  }
  const findings: Partial<Record<FindingKind, Finding>> = {};
  for (const name of names.sort()) {
    const kind = name.replace(/\.json$/, '');
    if (!name.endsWith('.json') || !isFindingKind(kind)) continue;
    findings[kind] = JSON.parse(await readFile(join(dir, name), 'utf8')) as Finding;
  }
  return findings;
}

/** Forgets the job's findings of one kind (a sync looks for it again; an origin that stops answering for it leaves none). */
export async function removeFinding(workDir: string, kind: FindingKind): Promise<void> {
  await rm(join(workDir, FINDINGS_DIR, `${kind}.json`), { force: true });
}
