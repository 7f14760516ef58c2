/**
 * The TFVC stand-in's labels, shelvesets and branches (`tfvc-origin.ts` serves the history), as
 * Microsoft's specification (`specification/tfvc/6.0/tfvc.json`) and its recorded examples
 * (`httpExamples/labels`, `shelvesets`, `shelvesetChanges`, `branches`; some are in
 * `test/fixtures/tfvc/`) say:
 * - `[{project}/]_apis/tfvc/labels?requestData.labelScope&requestData.name&requestData.owner&$top&$skip`
 *   → `{count, value: [TfvcLabelRef]}`, newest first, 100 a page unless `$top` says otherwise;
 * - `_apis/tfvc/shelvesets?requestData.name&requestData.owner&requestData.maxCommentLength&$top&$skip`
 *   (collection-wide: shelvesets belong to no project) → `{count, value: [TfvcShelvesetRef]}`,
 *   newest first; `_apis/tfvc/shelvesets/changes?shelvesetId&$top&$skip` → `{count, value: [TfvcChange]}`;
 * - `[{project}/]_apis/tfvc/branches?scopePath&includeDeleted` → `{count, value: [TfvcBranchRef]}`
 *   (Get Branch Refs: the branches at or under the scope); `…?path&includeParent&includeChildren`
 *   → one `TfvcBranch` (Get Branch); neither → the root branches (Get Branches).
 */
import type { ServerResponse } from 'node:http';

export interface TfvcUser {
  readonly displayName: string;
  readonly uniqueName: string;
}

export interface TfvcLabelSpec {
  /** Collection-wide, like changeset ids. */
  readonly id: number;
  readonly name: string;
  readonly owner: TfvcUser;
  /** Relative to the project or a whole server path (default: the project's folder). */
  readonly scope?: string;
  readonly description?: string;
  readonly date: string;
}

export interface TfvcBranchSpec {
  /** Relative to the project or a whole server path. */
  readonly path: string;
  /** The branch it was branched from (relative or whole), if any. */
  readonly parent?: string;
  readonly owner: TfvcUser;
  readonly date: string;
  readonly description?: string;
  readonly deleted?: boolean;
}

export interface TfvcShelvesetSpec {
  readonly name: string;
  readonly owner: TfvcUser;
  readonly date: string;
  readonly comment?: string;
  /** Whole server paths: a shelveset belongs to no project. */
  readonly changes: readonly { readonly path: string; readonly changeType: string }[];
}

/** What the stand-in's router hands over for one request. */
export interface ExtrasRequest {
  readonly route: string;
  readonly url: URL;
  /** The project of a `/{collection}/{project}/_apis/…` URL. */
  readonly project?: string;
  readonly projects: readonly {
    readonly name: string;
    readonly labels?: readonly TfvcLabelSpec[];
    readonly branches?: readonly TfvcBranchSpec[];
  }[];
  readonly shelvesets: readonly TfvcShelvesetSpec[];
  /** `http://host/{collection}` */
  readonly base: string;
  readonly identity: (user: TfvcUser) => Record<string, string>;
  readonly page: <T>(all: readonly T[]) => T[];
  readonly send: (status: number, body: Buffer) => ServerResponse;
  readonly notFound: (message: string) => ServerResponse;
  readonly cutComment: (comment: string, asked: string | null, fallback: number) => Record<string, unknown>;
  readonly dotNetChangeType: (changeType: string) => string;
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));
const serverPath = (project: string, path: string) => (path.startsWith('$/') ? path : `$/${project}/${path}`);
/** `path` is `scope` or lies under it (case-insensitively, as TFVC compares paths). */
const within = (path: string, scope: string) => {
  const p = path.toLowerCase();
  const s = scope.toLowerCase().replace(/\/+$/, '');
  return s === '$' || p === s || p.startsWith(`${s}/`);
};
const newestFirst = (a: { date: string }, b: { date: string }) => Date.parse(b.date) - Date.parse(a.date);

/** The answer to a labels, shelvesets or branches request, or undefined for any other route. */
export function answerExtras(request: ExtrasRequest): ServerResponse | undefined {
  if (request.route === '_apis/tfvc/labels') return labels(request);
  if (request.route === '_apis/tfvc/shelvesets' && request.project === undefined) return shelvesets(request);
  if (request.route === '_apis/tfvc/shelvesets/changes' && request.project === undefined)
    return shelvesetChanges(request);
  if (request.route === '_apis/tfvc/branches') return branches(request);
  return undefined;
}

function labels({ url, project, projects, base, identity, page, send }: ExtrasRequest) {
  const query = (name: string) => url.searchParams.get(`requestData.${name}`);
  const scope = query('labelScope');
  const name = query('name')?.toLowerCase();
  const owner = query('owner')?.toLowerCase();
  const all = projects
    .filter((candidate) => project === undefined || candidate.name.toLowerCase() === project.toLowerCase())
    .flatMap((candidate) =>
      (candidate.labels ?? []).map((label) => ({
        ...label,
        labelScope: serverPath(candidate.name, label.scope ?? `$/${candidate.name}`),
      })),
    )
    .filter((label) => scope === null || within(label.labelScope, scope))
    .filter((label) => name === undefined || label.name.toLowerCase() === name)
    .filter(
      (label) =>
        owner === undefined ||
        [label.owner.uniqueName, label.owner.displayName].some((value) => value.toLowerCase() === owner),
    )
    .sort((a, b) => b.id - a.id);
  const value = page(all).map((label) => ({
    id: label.id,
    name: label.name,
    description: label.description ?? '',
    labelScope: label.labelScope,
    modifiedDate: label.date,
    owner: identity(label.owner),
    url: `${base}/_apis/tfvc/labels/${label.id}`,
  }));
  return send(200, json({ count: value.length, value }));
}

const shelvesetId = (shelveset: TfvcShelvesetSpec, identity: ExtrasRequest['identity']) =>
  `${shelveset.name};${identity(shelveset.owner).id}`;

function shelvesets({
  url,
  shelvesets: all,
  base,
  identity,
  page,
  send,
  notFound,
  cutComment,
}: ExtrasRequest) {
  const query = (name: string) => url.searchParams.get(`requestData.${name}`);
  const ref = (shelveset: TfvcShelvesetSpec, commentLimit: number) => {
    const id = shelvesetId(shelveset, identity);
    return {
      name: shelveset.name,
      id,
      owner: identity(shelveset.owner),
      createdDate: shelveset.date,
      ...cutComment(shelveset.comment ?? '', query('maxCommentLength'), commentLimit),
      url: `${base}/_apis/tfvc/shelvesets/${encodeURIComponent(id)}`,
    };
  };
  const wanted = url.searchParams.get('shelvesetId');
  if (wanted !== null) {
    const one = all.find((shelveset) => shelvesetId(shelveset, identity) === wanted);
    if (!one) return notFound(`TF14062: The shelveset ${wanted} does not exist.`);
    return send(200, json(ref(one, 2000)));
  }
  const name = query('name')?.toLowerCase();
  const owner = query('owner')?.toLowerCase();
  const matching = [...all]
    .filter((shelveset) => name === undefined || shelveset.name.toLowerCase() === name)
    .filter(
      (shelveset) =>
        owner === undefined ||
        [shelveset.owner.uniqueName, shelveset.owner.displayName, identity(shelveset.owner).id ?? ''].some(
          (value) => value.toLowerCase() === owner,
        ),
    )
    .sort(newestFirst);
  // Listed shelvesets carry their comment only when asked (the recorded list has one of four).
  const value = page(matching).map((shelveset) => ref(shelveset, 80));
  return send(200, json({ count: value.length, value }));
}

function shelvesetChanges(request: ExtrasRequest) {
  const { url, shelvesets: all, base, identity, page, send, notFound, dotNetChangeType } = request;
  const wanted = url.searchParams.get('shelvesetId') ?? '';
  const one = all.find((shelveset) => shelvesetId(shelveset, identity) === wanted);
  if (!one) return notFound(`TF14062: The shelveset ${wanted} does not exist.`);
  const version = encodeURIComponent(`${one.name};${one.owner.uniqueName}`);
  const value = page(
    [...one.changes].sort((a, b) => (a.path.toLowerCase() < b.path.toLowerCase() ? -1 : 1)),
  ).map((change) => ({
    item: {
      path: change.path,
      url: `${base}/_apis/tfvc/items/${encodeURIComponent(change.path)}?versionType=Shelveset&version=${version}`,
    },
    changeType: dotNetChangeType(change.changeType),
  }));
  return send(200, json({ count: value.length, value }));
}

function branches({ url, project, projects, base, identity, send, notFound }: ExtrasRequest) {
  const flag = (name: string) => url.searchParams.get(name)?.toLowerCase() === 'true';
  const all = projects
    .filter((candidate) => project === undefined || candidate.name.toLowerCase() === project.toLowerCase())
    .flatMap((candidate) =>
      (candidate.branches ?? []).map((branch) => ({
        ...branch,
        path: serverPath(candidate.name, branch.path),
        parent: branch.parent === undefined ? undefined : serverPath(candidate.name, branch.parent),
      })),
    )
    .filter((branch) => flag('includeDeleted') || !branch.deleted);
  type Branch = (typeof all)[number];
  const ref = (branch: Branch) => ({
    path: branch.path,
    ...(branch.description === undefined ? {} : { description: branch.description }),
    owner: identity(branch.owner),
    createdDate: branch.date,
    ...(branch.deleted ? { isDeleted: true } : {}),
    url: `${base}/_apis/tfvc/branches/${branch.path}`,
  });
  const childrenOf = (branch: Branch): Branch[] =>
    all.filter((other) => other.parent?.toLowerCase() === branch.path.toLowerCase());
  // As the recorded Get Branch answers: a description always, a shorter owner, no url.
  const full = (branch: Branch, parent: boolean, children: boolean): Record<string, unknown> => {
    const { id, displayName, uniqueName } = identity(branch.owner);
    return {
      path: branch.path,
      description: branch.description ?? '',
      owner: { id, displayName, uniqueName },
      createdDate: branch.date,
      ...(branch.deleted ? { isDeleted: true } : {}),
      ...(parent && branch.parent !== undefined ? { parent: { path: branch.parent } } : {}),
      relatedBranches: [],
      mappings: [],
      ...(children ? { children: childrenOf(branch).map((child) => full(child, false, true)) } : {}),
    };
  };

  const scopePath = url.searchParams.get('scopePath');
  if (scopePath !== null) {
    const value = all.filter((branch) => within(branch.path, scopePath)).map(ref);
    return send(200, json({ count: value.length, value }));
  }
  const path = url.searchParams.get('path');
  if (path !== null) {
    const one = all.find((branch) => branch.path.toLowerCase() === path.replace(/\/+$/, '').toLowerCase());
    if (!one) return notFound(`TF15007: The branch ${path} could not be found.`);
    return send(200, json(full(one, flag('includeParent'), flag('includeChildren'))));
  }
  const roots = all.filter(
    (branch) => branch.parent === undefined || !all.some((b) => b.path === branch.parent),
  );
  const value = roots.map((branch) => full(branch, flag('includeParent'), flag('includeChildren')));
  return send(200, json({ count: value.length, value }));
}
