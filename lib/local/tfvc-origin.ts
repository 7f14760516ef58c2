/**
 * A TFVC stand-in for tests: a node:http server on 127.0.0.1 that answers the Azure DevOps / TFS
 * REST endpoints the TFVC adapter uses as Microsoft's published specification says
 * (`MicrosoftDocs/vsts-rest-api-specs`, `specification/tfvc/6.0/tfvc.json` and its recorded
 * `httpExamples/`; two of them are in `test/fixtures/tfvc/`, and a test compares this server's
 * answers with them), from an in-memory history (no TFVC server can run here). It promises no more
 * than the specification does, so an adapter that leans on anything else fails against it.
 * Served under `/{collection}` (and `/{collection}/{project}` where the spec allows a project):
 * - `_apis/projects` → `{count, value: [{id, name, url, state, visibility}]}`;
 * - `_apis/tfvc/changesets?searchCriteria.itemPath&searchCriteria.fromId&$orderby&$top&$skip&maxCommentLength`
 *   → `{count, value: [TfvcChangesetRef]}`, newest first unless `$orderby=id asc`; comments over
 *   80 characters are cut (`commentTruncated: true`) unless `maxCommentLength` says otherwise;
 * - `_apis/tfvc/changesets/{id}?maxCommentLength` → the changeset, its comment cut at 2,000
 *   characters by default (no `comment` when it is empty);
 * - `…/{id}/changes?$top&$skip&continuationToken` → `{count, value: [TfvcChange]}` sorted by server
 *   path (not in the order they were made), `changeType` as .NET writes a flags enum (`add, edit,
 *   encoding`: lowest flag first, `, `-joined), a move's `sourceServerItem`; `x-ms-continuationtoken`
 *   while more remain;
 * - `_apis/tfvc/items?path&versionDescriptor.version` → the item at that changeset: its JSON
 *   metadata (`TfvcItem`) unless `$format` (first) or `Accept` (then) asks for `octetStream` /
 *   `text` bytes; `download=true` only adds `Content-Disposition: attachment`;
 *   `?scopePath&recursionLevel=None` → `{count, value: [the folder item]}`; an item listed in
 *   `failContent` fails as Azure DevOps fails: its status with a JSON error body whose `message`
 *   holds the server's words;
 * - labels, shelvesets and branches: `tfvc-origin-extras.ts`.
 * `$top` is capped by `maxPage` so clients must page. With `pat`, every request needs Basic auth
 * with any username and the PAT as password; otherwise 401 (TFS) or 203 with an HTML sign-in page
 * (Azure DevOps), per `authStyle`.
 */
import { createHash } from 'node:crypto';
import { createServer } from 'node:http';
import type { OriginServer } from './git-origins.ts';
import {
  answerExtras,
  type TfvcBranchSpec,
  type TfvcLabelSpec,
  type TfvcShelvesetSpec,
  type TfvcUser,
} from './tfvc-origin-extras.ts';

export type { TfvcBranchSpec, TfvcLabelSpec, TfvcShelvesetSpec, TfvcUser };

export interface TfvcChangeSpec {
  /** Relative to `$/{project}/`, or a whole server path (`$/Other/x`) outside the project. */
  readonly path: string;
  /** Flags in any order (`rename, edit`); answered in .NET's order (`edit, rename`). */
  readonly changeType: string;
  readonly folder?: boolean;
  /** The file's content after this change (a rename without one keeps the old content). */
  readonly content?: string | Buffer;
  /** A rename's old path, relative to the project or a whole server path. */
  readonly source?: string;
}

export interface TfvcChangesetSpec {
  /** Collection-wide: projects share the numbering, so a project's ids have gaps. */
  readonly id: number;
  readonly author: TfvcUser;
  readonly checkedInBy?: TfvcUser;
  readonly date: string;
  readonly comment: string;
  readonly changes: readonly TfvcChangeSpec[];
}

export interface TfvcProjectSpec {
  readonly name: string;
  /** False: a Git-only project (its `$/{name}` does not exist). */
  readonly tfvc?: boolean;
  readonly changesets: readonly TfvcChangesetSpec[];
  readonly labels?: readonly TfvcLabelSpec[];
  readonly branches?: readonly TfvcBranchSpec[];
}

/** An item whose content the server fails to send, answering as Azure DevOps does: a JSON error body. */
export interface TfvcItemFailure {
  /** A whole server path. */
  readonly path: string;
  readonly changeset: number;
  readonly status: number;
  /** The error body's `message`, the server's own words. */
  readonly message: string;
  readonly typeKey?: string;
}

export interface TfvcServeOptions {
  readonly collection?: string;
  readonly projects: readonly TfvcProjectSpec[];
  /** Requests need Basic auth with this PAT as the password. */
  readonly pat?: string;
  readonly authStyle?: 401 | 203;
  /** Largest page a list answers, whatever `$top` asks (default 100). */
  readonly maxPage?: number;
  /** Every Nth request is throttled: 429 with `Retry-After` (fractional seconds, to keep tests quick). */
  readonly throttleEvery?: number;
  /** A server (or proxy) that answers an item's JSON metadata whatever `$format` and `Accept` ask. */
  readonly metadataOnly?: boolean;
  /** The collection's shelvesets (they belong to no project). */
  readonly shelvesets?: readonly TfvcShelvesetSpec[];
  /** Items whose content fails. */
  readonly failContent?: readonly TfvcItemFailure[];
}

export interface TfvcServer extends OriginServer {
  /** `http://127.0.0.1:<port>/<collection>` */
  readonly collectionUrl: string;
  /**
   * Serves `projects` from the next request on: the origin moving on (new changesets, labels, a
   * folder deleted) or, as `tf destroy` may, a history that no longer holds what was imported.
   */
  replaceHistory(projects: readonly TfvcProjectSpec[]): void;
}

interface Version {
  readonly changeset: number;
  readonly content: Buffer | null;
  readonly folder: boolean;
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));

/** `VersionControlChangeType`'s flags by value, as .NET's `Enum.ToString` lists them. */
const CHANGE_FLAGS = [
  'add',
  'edit',
  'encoding',
  'rename',
  'delete',
  'undelete',
  'branch',
  'merge',
  'lock',
  'rollback',
  'sourceRename',
  'targetRename',
  'property',
] as const;

const flagsOf = (changeType: string) => changeType.split(',').map((flag) => flag.trim());

/** The spec's spelling of a set of flags: lowest value first, joined with `, `. */
export function dotNetChangeType(changeType: string): string {
  const flags = flagsOf(changeType);
  const unknown = flags.filter((flag) => !(CHANGE_FLAGS as readonly string[]).includes(flag));
  if (unknown.length > 0) throw new Error(`unknown change type ${unknown.join(', ')}`);
  return CHANGE_FLAGS.filter((flag) => flags.includes(flag)).join(', ');
}

/** A spec path (relative to the project, or a whole `$/…` path) as a server path. */
const serverPath = (project: string, path: string) => (path.startsWith('$/') ? path : `$/${project}/${path}`);

/** The recorded defaults: lists cut comments at 80 characters, one changeset at 2,000. */
const LIST_COMMENT_LENGTH = 80;
const ONE_COMMENT_LENGTH = 2000;

function cutComment(comment: string, asked: string | null, fallback: number) {
  const limit = asked === null || !/^\d+$/.test(asked) ? fallback : Number(asked);
  if (comment === '') return {};
  if (comment.length <= limit) return { comment };
  return { comment: comment.slice(0, limit), commentTruncated: true };
}

/** A file item's bytes are asked for by `$format` first, then by `Accept`; JSON otherwise. */
function wantsBytes(format: string | null, accept: string | undefined): boolean {
  if (format !== null) return ['octetstream', 'text'].includes(format.toLowerCase());
  const types = (accept ?? '').split(',').map((type) => type.split(';')[0]?.trim().toLowerCase());
  return types.includes('application/octet-stream') || types.includes('text/plain');
}

/** Each server path's versions and the changesets in id order: what every answer is read from. */
function indexHistory(projects: readonly TfvcProjectSpec[]) {
  // Every server path's versions, oldest first (paths compared case-insensitively, as TFVC does).
  const versions = new Map<string, Version[]>();
  const at = (path: string, changeset: number): Version | undefined =>
    (versions.get(path.toLowerCase()) ?? []).filter((v) => v.changeset <= changeset).at(-1);
  const record = (path: string, version: Version) => {
    const key = path.toLowerCase();
    const known = versions.get(key);
    if (known) known.push(version);
    else versions.set(key, [version]);
  };
  const changesets = projects
    .flatMap((project) => project.changesets.map((changeset) => ({ project, changeset })))
    .sort((a, b) => a.changeset.id - b.changeset.id);
  for (const { project, changeset } of changesets) {
    if (project.tfvc !== false && !at(`$/${project.name}`, changeset.id))
      record(`$/${project.name}`, { changeset: changeset.id, content: null, folder: true });
    for (const change of changeset.changes) {
      const path = serverPath(project.name, change.path);
      const types = flagsOf(change.changeType);
      if (types.includes('delete')) {
        for (const key of [...versions.keys()])
          if (key === path.toLowerCase() || key.startsWith(`${path.toLowerCase()}/`))
            record(key, { changeset: changeset.id, content: null, folder: false });
        continue;
      }
      const source = change.source === undefined ? undefined : serverPath(project.name, change.source);
      if (change.folder) {
        record(path, { changeset: changeset.id, content: null, folder: true });
        continue;
      }
      const previous = source === undefined ? at(path, changeset.id) : at(source, changeset.id);
      const content =
        change.content === undefined
          ? (previous?.content ?? Buffer.alloc(0))
          : Buffer.isBuffer(change.content)
            ? change.content
            : Buffer.from(change.content);
      if (source !== undefined) record(source, { changeset: changeset.id, content: null, folder: false });
      record(path, { changeset: changeset.id, content, folder: false });
    }
  }
  return { projects, changesets, at };
}

export async function serveTfvc(options: TfvcServeOptions): Promise<TfvcServer> {
  const collection = options.collection ?? 'DefaultCollection';
  const maxPage = options.maxPage ?? 100;
  const requests: string[] = [];
  let history = indexHistory(options.projects);

  const identity = (user: TfvcUser) => ({
    displayName: user.displayName,
    url: `https://spsprodeus27.vssps.visualstudio.com/_apis/Identities/${user.uniqueName}`,
    id: Buffer.from(user.uniqueName).toString('hex').slice(0, 32).padEnd(32, '0'),
    uniqueName: user.uniqueName,
    imageUrl: `https://dev.azure.com/${collection}/_api/_common/identityImage`,
  });

  const server = createServer((req, res) => {
    requests.push(`${req.method} ${req.url}`);
    const { projects, changesets, at } = history;
    if (options.throttleEvery !== undefined && requests.length % options.throttleEvery === 0) {
      res.writeHead(429, { 'retry-after': '0.05', 'content-type': 'text/plain' }).end('Too many requests');
      return;
    }
    const url = new URL(req.url ?? '/', 'http://stand-in');
    const base = `http://${req.headers.host}/${collection}`;
    const send = (status: number, body: Buffer, type = 'application/json; charset=utf-8; api-version=6.0') =>
      res.writeHead(status, { 'content-type': type, 'content-length': body.length }).end(body);
    // Azure DevOps' error body: `message` holds the server's own words.
    const failure = (status: number, message: string, typeKey: string) =>
      send(
        status,
        json({
          $id: '1',
          innerException: null,
          message,
          typeName: `Microsoft.TeamFoundation.Core.WebApi.${typeKey}`,
          typeKey,
          errorCode: 0,
          eventId: 3000,
        }),
      );
    const notFound = (message: string) => failure(404, message, 'ProjectDoesNotExistWithNameException');

    if (options.pat !== undefined) {
      const expected = Buffer.from(`:${options.pat}`);
      const given = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
      const decoded = given === undefined ? '' : Buffer.from(given, 'base64').toString('utf8');
      if (decoded.slice(decoded.indexOf(':')) !== expected.toString()) {
        if (options.authStyle === 203)
          return send(
            203,
            Buffer.from(
              '<!DOCTYPE html><html><head><title>Azure DevOps Services | Sign In</title></head><body>Sign in</body></html>',
            ),
            'text/html; charset=utf-8',
          );
        res.setHeader('www-authenticate', 'Basic realm="https://tfs.local/"');
        return send(401, Buffer.from('Unauthorized'), 'text/html; charset=utf-8');
      }
    }

    const segments = url.pathname
      .split('/')
      .filter((segment) => segment !== '')
      .map(decodeURIComponent);
    if (segments[0]?.toLowerCase() !== collection.toLowerCase())
      return send(200, Buffer.from('<!DOCTYPE html><html><body>Welcome</body></html>'), 'text/html');
    let rest = segments.slice(1);
    let scope: TfvcProjectSpec | undefined;
    if (rest[0] !== '_apis') {
      scope = projects.find((project) => project.name.toLowerCase() === rest[0]?.toLowerCase());
      if (!scope) return notFound(`The project ${rest[0]} does not exist.`);
      rest = rest.slice(1);
    }
    const route = rest.join('/');
    const top = Math.min(Number(url.searchParams.get('$top') ?? maxPage) || maxPage, maxPage);
    const skip = Number(url.searchParams.get('$skip') ?? 0) || 0;
    const page = <T>(all: readonly T[]) => all.slice(skip, skip + top);

    if (route === '_apis/projects' && !scope) {
      const value = page(projects).map((project) => ({
        id: Buffer.from(project.name).toString('hex').padEnd(32, '0').slice(0, 32),
        name: project.name,
        url: `${base}/_apis/projects/${encodeURIComponent(project.name)}`,
        state: 'wellFormed',
        revision: 11,
        visibility: 'private',
        lastUpdateTime: '2024-01-01T00:00:00.000Z',
      }));
      return send(200, json({ count: value.length, value }));
    }

    if (route === '_apis/tfvc/changesets') {
      const itemPath = (url.searchParams.get('searchCriteria.itemPath') ?? '$/')
        .toLowerCase()
        .replace(/\/+$/, '');
      const fromId = Number(url.searchParams.get('searchCriteria.fromId') ?? 0) || 0;
      const ascending = url.searchParams.get('$orderby')?.toLowerCase() === 'id asc';
      const matching = changesets
        .filter(({ project, changeset }) => {
          if (scope && project !== scope) return false;
          if (changeset.id < fromId) return false;
          const root = `$/${project.name}`.toLowerCase();
          return itemPath === '$' || itemPath === root || itemPath.startsWith(`${root}/`);
        })
        .map(({ changeset }) => changeset);
      if (!ascending) matching.reverse();
      const value = page(matching).map((changeset) => ({
        changesetId: changeset.id,
        url: `${base}/_apis/tfvc/changesets/${changeset.id}`,
        author: identity(changeset.author),
        checkedInBy: identity(changeset.checkedInBy ?? changeset.author),
        createdDate: changeset.date,
        ...cutComment(changeset.comment, url.searchParams.get('maxCommentLength'), LIST_COMMENT_LENGTH),
      }));
      return send(200, json({ count: value.length, value }));
    }

    const one = /^_apis\/tfvc\/changesets\/(\d+)(\/changes)?$/.exec(route);
    if (one) {
      const found = changesets.find(({ changeset }) => changeset.id === Number(one[1]));
      if (!found) return notFound(`TF14045: The changeset ${one[1]} does not exist.`);
      const { project, changeset } = found;
      const self = `${base}/_apis/tfvc/changesets/${changeset.id}`;
      const people = `https://vssps.dev.azure.com/${collection}/_apis/Identities`;
      if (!one[2])
        return send(
          200,
          json({
            changesetId: changeset.id,
            url: self,
            author: identity(changeset.author),
            checkedInBy: identity(changeset.checkedInBy ?? changeset.author),
            createdDate: changeset.date,
            ...cutComment(changeset.comment, url.searchParams.get('maxCommentLength'), ONE_COMMENT_LENGTH),
            _links: {
              self: { href: self },
              changes: { href: `${self}/changes` },
              workItems: { href: `${self}/workItems` },
              author: { href: `${people}/${identity(changeset.author).id}` },
              checkedInBy: { href: `${people}/${identity(changeset.checkedInBy ?? changeset.author).id}` },
            },
          }),
        );
      // The specification promises no order: the service sorts changes by server path.
      const changes = changeset.changes
        .map((change) => ({ change, path: serverPath(project.name, change.path) }))
        .sort((a, b) => (a.path.toLowerCase() < b.path.toLowerCase() ? -1 : 1));
      const token = url.searchParams.get('continuationToken');
      const from = token === null ? skip : Number(Buffer.from(token, 'base64url').toString()) || 0;
      const value = changes.slice(from, from + top).map(({ change, path }) => {
        const content = at(path, changeset.id)?.content;
        return {
          item: {
            version: changeset.id,
            ...(change.folder ? { isFolder: true } : {}),
            ...(!change.folder && content
              ? { size: content.length, hashValue: createHash('md5').update(content).digest('base64') }
              : {}),
            path,
            url: `${base}/_apis/tfvc/items/${path}?versionType=Changeset&version=${changeset.id}`,
          },
          changeType: dotNetChangeType(change.changeType),
          ...(change.source === undefined
            ? {}
            : { sourceServerItem: serverPath(project.name, change.source) }),
        };
      });
      if (from + top < changes.length)
        res.setHeader('x-ms-continuationtoken', Buffer.from(String(from + top)).toString('base64url'));
      return send(200, json({ count: value.length, value }));
    }

    if (route === '_apis/tfvc/items') {
      const scopePath = url.searchParams.get('scopePath');
      const version = Number(url.searchParams.get('versionDescriptor.version') ?? Number.MAX_SAFE_INTEGER);
      if (scopePath !== null && url.searchParams.get('recursionLevel')?.toLowerCase() === 'none') {
        const item = at(scopePath.replace(/\/+$/, ''), version);
        if (!item || (!item.folder && item.content === null))
          return notFound(`TF401174: The item ${scopePath} could not be found in the repository`);
        return send(
          200,
          json({
            count: 1,
            value: [
              {
                version: item.changeset,
                ...(item.folder ? { isFolder: true } : {}),
                path: scopePath,
                url: `${base}/_apis/tfvc/items/${scopePath}`,
              },
            ],
          }),
        );
      }
      const path = url.searchParams.get('path') ?? '';
      const failing = options.failContent?.find(
        (entry) => entry.path.toLowerCase() === path.toLowerCase() && entry.changeset === version,
      );
      if (failing)
        return failure(failing.status, failing.message, failing.typeKey ?? 'TeamFoundationServiceException');
      const item = at(path, version);
      if (!item || item.folder || item.content === null)
        return notFound(`TF401174: The item ${path} could not be found in the repository`);
      const name = path.split('/').at(-1) ?? '';
      if (url.searchParams.get('download')?.toLowerCase() === 'true')
        res.setHeader('content-disposition', `attachment; filename="${encodeURIComponent(name)}"`);
      if (!options.metadataOnly && wantsBytes(url.searchParams.get('$format'), req.headers.accept))
        return send(200, item.content, 'application/octet-stream');
      const binary = item.content.includes(0);
      const encoding = binary ? -1 : 65001;
      const self = `${base}/_apis/tfvc/items/${path}?versionType=Changeset&version=${item.changeset}`;
      return send(
        200,
        json({
          version: item.changeset,
          changeDate: changesets.find(({ changeset }) => changeset.id === item.changeset)?.changeset.date,
          size: item.content.length,
          hashValue: createHash('md5').update(item.content).digest('base64'),
          encoding,
          path,
          contentMetadata: {
            encoding,
            contentType: binary ? 'application/octet-stream' : 'text/plain',
            fileName: name,
            extension: name.includes('.') ? name.slice(name.lastIndexOf('.')) : '',
            vsLink: `vsweb://vs/?Product=Visual_Studio&Gen=2013&EncFormat=UTF8&tfslink=${Buffer.from(path).toString('base64')}`,
          },
          url: `${base}/_apis/tfvc/items/${path}?versionType=Latest&versionOptions=None`,
          _links: { self: { href: self } },
        }),
      );
    }
    const extra = answerExtras({
      route,
      url,
      project: scope?.name,
      projects,
      shelvesets: options.shelvesets ?? [],
      base,
      identity,
      page,
      send: (status, body) => send(status, body),
      notFound,
      cutComment,
      dotNetChangeType,
    });
    if (extra) return;
    return notFound(`No API resource at ${url.pathname}`);
  });

  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  const port = typeof address === 'object' && address !== null ? address.port : 0;
  return {
    url: `http://127.0.0.1:${port}`,
    collectionUrl: `http://127.0.0.1:${port}/${collection}`,
    port,
    requests,
    replaceHistory: (projects) => {
      history = indexHistory(projects);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
