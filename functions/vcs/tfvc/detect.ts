/**
 * Detection and locating the project: a URL is a collection (it lists projects; the TFVC ones are
 * candidates) or a project in a collection (`{collection}/{project}`: its `$/{project}` folder
 * answers). Anything that is not the API's JSON is `nothing`, so the other adapters' answers win.
 */
import { checkOriginUrl } from '#domain/origin-url';
import { type Detection, ForbiddenAddress, type OriginAccess, OriginFailed, type RawJob } from '#vcs/origin';
import { type ApiClient, apiUrl, call, isRecord, jsonOf, listOf, wantsCredentials } from './api-client.ts';

export function checkedUrl(raw: string, access: Pick<OriginAccess, 'allowedAddresses'>): URL {
  const check = checkOriginUrl(raw, 'tfvc', access.allowedAddresses);
  if (check.ok) return check.url;
  if (check.problem === 'forbidden_address') throw new ForbiddenAddress(new URL(raw).hostname);
  throw new OriginFailed(check.message);
}

const trimmed = (url: URL) =>
  url
    .toString()
    .replace(/[?#].*$/, '')
    .replace(/\/+$/, '');

/**
 * The URL is a collection (it lists projects: the TFVC ones are the candidates) or a project in a
 * collection (`{collection}/{project}`: its `$/{project}` folder answers). Anything that is not
 * the API's JSON is `nothing`, so the other adapters' answers win.
 */
export async function detectTfvc(
  url: URL,
  access: OriginAccess,
  api: ApiClient,
  maxProbed: number,
): Promise<Detection> {
  const probe = async (target: string) => {
    try {
      return await api.get(target, 4 * 1024 * 1024);
    } catch (error) {
      if (error instanceof ForbiddenAddress) throw error;
      return undefined; // unreachable, timed out, not HTTP
    }
  };
  const base = trimmed(url);
  const projects = await probe(apiUrl(base, '_apis/projects', { $top: maxProbed }));
  if (!projects) return { kind: 'nothing' };
  if (wantsCredentials(projects)) return { kind: 'needs_auth' };
  const listed = listOf(jsonOf(projects));
  if (listed) {
    const names = listed.map((project) => project.name).filter((name) => typeof name === 'string');
    const wanted = access.tfvcProject;
    const ordered =
      wanted !== undefined && names.some((name) => name.toLowerCase() === wanted.toLowerCase())
        ? names.filter((name) => name.toLowerCase() === wanted.toLowerCase())
        : names;
    const tfvc: string[] = [];
    for (const name of ordered.slice(0, maxProbed)) {
      const root = await probe(projectRootUrl(base, name));
      if (root && wantsCredentials(root)) return { kind: 'needs_auth' };
      if (root && isProjectRoot(jsonOf(root), name)) tfvc.push(name);
    }
    if (tfvc.length === 0) return { kind: 'nothing' };
    if (tfvc.length === 1) return { kind: 'found', vcs: 'tfvc' };
    return {
      kind: 'multiple',
      choices: tfvc.map((name) => ({ vcs: 'tfvc' as const, humanName: name, tfvcProject: name })),
    };
  }
  const split = splitProjectUrl(base);
  if (!split) return { kind: 'nothing' };
  const root = await probe(projectRootUrl(split.collection, split.project));
  if (!root) return { kind: 'nothing' };
  if (wantsCredentials(root)) return { kind: 'needs_auth' };
  return isProjectRoot(jsonOf(root), split.project) ? { kind: 'found', vcs: 'tfvc' } : { kind: 'nothing' };
}

const projectRootUrl = (collection: string, project: string) =>
  apiUrl(collection, '_apis/tfvc/items', { scopePath: `$/${project}`, recursionLevel: 'None' });

/** The answer for `$/{project}` with recursion None holds a folder item with that path (at any place). */
function isProjectRoot(value: unknown, project: string): boolean {
  const items = listOf(value) ?? (isRecord(value) ? [value] : []);
  return items.some(
    (item) => typeof item.path === 'string' && item.path.toLowerCase() === `$/${project}`.toLowerCase(),
  );
}

/** `{collection}/{project}` → both (the project's name decoded), or undefined for a bare host. */
function splitProjectUrl(base: string): { collection: string; project: string } | undefined {
  const url = new URL(base);
  const segments = url.pathname.split('/').filter((segment) => segment !== '');
  const last = segments.pop();
  if (last === undefined) return undefined;
  let project: string;
  try {
    project = decodeURIComponent(last);
  } catch {
    return undefined;
  }
  const collection = `${url.origin}${segments.length > 0 ? `/${segments.join('/')}` : ''}`;
  return { collection, project };
}

/**
 * Which project of which collection to import: `tfvcProject` (given at `PUT`, or chosen after
 * `detection_found_multiple`), else the project the URL names, else the collection's only TFVC
 * project. Failures here are the user's to read.
 */
export async function locate(
  url: URL,
  job: OriginAccess & Pick<RawJob, 'choice'>,
  api: ApiClient,
): Promise<{ collection: string; project: string }> {
  const wanted = job.tfvcProject ?? job.choice?.tfvcProject;
  const base = trimmed(url);
  const projects = await call(
    api,
    apiUrl(base, '_apis/projects', { $top: 1000 }),
    job,
    'Listing the projects of the collection',
    true,
  );
  let candidates: { collection: string; project: string }[];
  if (projects !== undefined && listOf(projects)) {
    const names = (listOf(projects) ?? [])
      .map((project) => project.name)
      .filter((name): name is string => typeof name === 'string');
    const chosen =
      wanted === undefined ? names : names.filter((name) => name.toLowerCase() === wanted.toLowerCase());
    if (wanted !== undefined && chosen.length === 0)
      throw new OriginFailed(`The collection at ${base} has no project named ${wanted}`);
    candidates = chosen.map((project) => ({ collection: base, project }));
  } else {
    const split = splitProjectUrl(base);
    if (!split) throw new OriginFailed(`No TFVC collection or project was found at ${base}`);
    candidates = [wanted === undefined ? split : { collection: split.collection, project: wanted }];
  }
  const tfvc: { collection: string; project: string }[] = [];
  for (const candidate of candidates) {
    const root = await call(
      api,
      projectRootUrl(candidate.collection, candidate.project),
      job,
      `Reading the folder $/${candidate.project}`,
      true,
    );
    if (root !== undefined && isProjectRoot(root, candidate.project)) tfvc.push(candidate);
  }
  const only = tfvc[0];
  if (only === undefined)
    throw new OriginFailed(
      wanted === undefined
        ? `No TFVC project was found at ${base}`
        : `The project ${wanted} at ${base} has no TFVC repository`,
    );
  if (tfvc.length > 1)
    throw new OriginFailed(
      `The collection at ${base} has several TFVC projects: choose one with tfvc_project`,
    );
  return only;
}
