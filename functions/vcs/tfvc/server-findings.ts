/**
 * What a TFVC project has beside its history and the import does not carry over, read from the
 * specification's own endpoints for the import report (`#vcs/findings`):
 * - `tfvc_labels`: `GET {project}/_apis/tfvc/labels?requestData.labelScope=$/{project}`, paged
 *   with `$top`/`$skip` until a page is empty (the specification promises no page size);
 * - `tfvc_shelvesets`: `GET _apis/tfvc/shelvesets` (collection-wide, paged the same way), each
 *   kept when its changes (`GET _apis/tfvc/shelvesets/changes?shelvesetId=`) touch `$/{project}`;
 * - `tfvc_branches`: `GET {project}/_apis/tfvc/branches?scopePath=$/{project}` (Get Branch Refs),
 *   then each branch's parent from `GET …/branches?path=&includeParent=true` (Get Branch).
 * A kind whose endpoint answers 404 or something other than the API's JSON (an older server) is
 * not recorded: the report then says nothing of it rather than "none".
 */
import type { FindingEntry } from '#domain/import-report';
import { saveFinding } from '#vcs/findings';
import type { OriginAccess } from '#vcs/origin';
import { type ApiClient, apiUrl, call, isRecord, listOf } from './api-client.ts';
import { relative } from './changesets.ts';

interface Where {
  readonly api: ApiClient;
  readonly access: OriginAccess;
  readonly collection: string;
  readonly project: string;
  readonly pageSize: number;
}

/** Reads and saves the labels, shelvesets and branches of the project. */
export async function saveServerFindings(workDir: string, where: Where): Promise<void> {
  const labels = await readLabels(where);
  if (labels !== undefined) await saveFinding(workDir, 'tfvc_labels', labels);
  const shelvesets = await readShelvesets(where);
  if (shelvesets !== undefined) await saveFinding(workDir, 'tfvc_shelvesets', shelvesets);
  const branches = await readBranches(where);
  if (branches !== undefined) await saveFinding(workDir, 'tfvc_branches', branches);
}

const projectBase = ({ collection, project }: Where) => `${collection}/${encodeURIComponent(project)}`;

/** Every entry of a `{count, value}` list read with `$top`/`$skip`, or undefined when not served. */
async function listAll(
  where: Where,
  step: string,
  url: (skip: number) => string,
): Promise<Record<string, unknown>[] | undefined> {
  const all: Record<string, unknown>[] = [];
  for (let skip = 0; ; ) {
    const page = listOf(await call(where.api, url(skip), where.access, step, true));
    if (page === undefined) return skip === 0 ? undefined : all;
    if (page.length === 0) return all;
    all.push(...page);
    skip += page.length;
  }
}

/** `DOMAIN\user` or an email, else the display name; null when the server sent no identity. */
const personOf = (value: unknown): string | null => {
  if (!isRecord(value)) return null;
  for (const key of ['uniqueName', 'displayName'])
    if (typeof value[key] === 'string' && value[key] !== '') return value[key] as string;
  return null;
};
const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);

async function readLabels(where: Where): Promise<FindingEntry[] | undefined> {
  const labels = await listAll(where, `Listing the labels of $/${where.project}`, (skip) =>
    apiUrl(projectBase(where), '_apis/tfvc/labels', {
      'requestData.labelScope': `$/${where.project}`,
      $top: where.pageSize,
      $skip: skip,
    }),
  );
  return labels?.map(
    (label): FindingEntry => ({
      name: text(label.name) ?? '',
      owner: personOf(label.owner),
      scope: text(label.labelScope),
      modified_date: text(label.modifiedDate),
    }),
  );
}

async function readShelvesets(where: Where): Promise<FindingEntry[] | undefined> {
  const shelvesets = await listAll(where, 'Listing the shelvesets of the collection', (skip) =>
    apiUrl(where.collection, '_apis/tfvc/shelvesets', { $top: where.pageSize, $skip: skip }),
  );
  if (shelvesets === undefined) return undefined;
  const ours: FindingEntry[] = [];
  for (const shelveset of shelvesets) {
    const id = text(shelveset.id);
    const name = text(shelveset.name) ?? id ?? '';
    if (id === null || !(await touchesProject(where, id, name))) continue;
    ours.push({ name, owner: personOf(shelveset.owner), created_date: text(shelveset.createdDate) });
  }
  return ours;
}

/** Whether a shelveset changes anything under `$/{project}` (read until one change is). */
async function touchesProject(where: Where, id: string, name: string): Promise<boolean> {
  const prefix = `$/${where.project}`.toLowerCase();
  for (let skip = 0; ; ) {
    const page = listOf(
      await call(
        where.api,
        apiUrl(where.collection, '_apis/tfvc/shelvesets/changes', {
          shelvesetId: id,
          $top: where.pageSize,
          $skip: skip,
        }),
        where.access,
        `Reading the changes of the shelveset ${name}`,
        true,
      ),
    );
    if (page === undefined || page.length === 0) return false;
    const paths = page.map((change) => (isRecord(change.item) ? text(change.item.path) : null));
    if (
      paths.some(
        (path) =>
          path !== null && (path.toLowerCase() === prefix || path.toLowerCase().startsWith(`${prefix}/`)),
      )
    )
      return true;
    skip += page.length;
  }
}

async function readBranches(where: Where): Promise<FindingEntry[] | undefined> {
  const refs = listOf(
    await call(
      where.api,
      apiUrl(projectBase(where), '_apis/tfvc/branches', { scopePath: `$/${where.project}` }),
      where.access,
      `Listing the branches of $/${where.project}`,
      true,
    ),
  );
  if (refs === undefined) return undefined;
  const branches: FindingEntry[] = [];
  for (const ref of refs) {
    const path = text(ref.path);
    if (path === null) continue;
    const branch = await call(
      where.api,
      apiUrl(projectBase(where), '_apis/tfvc/branches', { path, includeParent: 'true' }),
      where.access,
      `Reading the branch ${path}`,
      true,
    );
    const parent = isRecord(branch) && isRecord(branch.parent) ? text(branch.parent.path) : null;
    branches.push({ path, parent, folder: relative(path, where.project) ?? null });
  }
  return branches.sort((a, b) => String(a.path).localeCompare(String(b.path)));
}
