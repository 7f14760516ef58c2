import { createHash } from 'node:crypto';

/**
 * The one naming scheme for refs made from an origin's branch, bookmark, head and tag names
 * (Mercurial, Subversion), so that every one arrives under its own valid Git ref:
 *
 * 1. A name that is a valid Git ref name (`git check-ref-format`) and clashes with no ref taken
 *    before it keeps it. Clashing means the same ref, or one ref being a folder of the other
 *    (`branches/a` and `branches/a/b` cannot both exist). Requests are taken in the order given,
 *    which the caller makes deterministic (e.g. the default branch first, then sorted names).
 * 2. Every other name is renamed: its readable form (each run of characters Git refuses becomes
 *    `_`, empty and leading/trailing `/` parts are dropped, a part's leading `.`, trailing `.` and
 *    `.lock` become `_`, `..` becomes `.`, `@{` becomes `@_`, a part longer than 200 bytes is cut),
 *    then `-` and the first 8 hex digits of the SHA-256 of the wanted name. If that still clashes,
 *    its `/` become `-`; if even that clashes, `-2`, `-3`, … follow.
 *
 * Nothing is dropped, and the same requests in the same order always give the same refs.
 */

/** One ref an origin needs: `prefix` + `path` is what it would be called if Git allowed anything. */
export interface RefRequest<Kind extends string = string> {
  /** What the origin calls it: `branch`, `bookmark`, `head`, `tag`, … (for the rename record). */
  readonly kind: Kind;
  /** The origin's own name for it. */
  readonly name: string;
  /** Where it goes: `refs/heads/`, `refs/heads/branches/`, `refs/tags/` (valid, ends with `/`). */
  readonly prefix: string;
  /** The wanted name under `prefix`, as the origin spells it (it may be anything). */
  readonly path: string;
}

/** A request (with whatever else the caller keeps on it) and the ref it gets. */
export type AssignedRef<Request extends RefRequest = RefRequest> = Request & {
  readonly ref: string;
  /** Why it is not `prefix + path`: Git refuses that name, or another ref already holds it. */
  readonly renamed?: 'invalid' | 'clash';
};

/** A rename as the import report shows it: origin name → Git ref. */
export interface RefRename {
  readonly kind: string;
  readonly name: string;
  readonly ref: string;
  readonly reason: 'invalid' | 'clash';
}

/** What Git refuses in a ref: control characters, space, `~^:?*[\`, and lone surrogates (no UTF-8). */
const REFUSED =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it finds
  /[\u0000-\u0020\u007f~^:?*[\\]+|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
const MAX_PART_BYTES = 200;

/** Cuts `part` to at most `MAX_PART_BYTES` UTF-8 bytes, between characters. */
function cut(part: string): string {
  if (Buffer.byteLength(part) <= MAX_PART_BYTES) return part;
  let out = '';
  for (const char of part) {
    if (Buffer.byteLength(out + char) > MAX_PART_BYTES) break;
    out += char;
  }
  return out;
}

/** The readable, valid form of a path under a prefix (rule 2 without the suffix). */
export function readableRefPath(path: string): string {
  const parts = path
    .replace(REFUSED, '_')
    .replace(/@\{/g, '@_')
    .replace(/\.{2,}/g, '.')
    .split('/')
    .filter((part) => part !== '')
    .map((part) =>
      cut(part)
        .replace(/^\./, '_')
        .replace(/\.lock$/, '_lock')
        .replace(/\.$/, '_'),
    )
    .map((part) => (part === '@' ? '_' : part));
  return parts.length === 0 ? '_' : parts.join('/');
}

/** Whether Git takes `path` as it is under a valid prefix. */
export const isValidRefPath = (path: string): boolean => path !== '' && readableRefPath(path) === path;

const suffix = (path: string) => createHash('sha256').update(path, 'utf8').digest('hex').slice(0, 8);

/** Gives each request its own valid ref (see the module comment); the result is in request order. */
export function assignRefNames<Request extends RefRequest>(
  requests: readonly Request[],
): AssignedRef<Request>[] {
  const taken = new Set<string>();
  const folders = new Set<string>();
  const clashes = (ref: string) => {
    if (taken.has(ref) || folders.has(ref)) return true;
    for (let at = ref.indexOf('/'); at >= 0; at = ref.indexOf('/', at + 1))
      if (taken.has(ref.slice(0, at))) return true;
    return false;
  };
  const take = (ref: string) => {
    taken.add(ref);
    for (let at = ref.indexOf('/'); at >= 0; at = ref.indexOf('/', at + 1)) folders.add(ref.slice(0, at));
    return ref;
  };

  const assigned: (AssignedRef<Request> | undefined)[] = requests.map((request) => {
    const ref = request.prefix + request.path;
    return isValidRefPath(request.path) && !clashes(ref) ? { ...request, ref: take(ref) } : undefined;
  });
  return requests.map((request, i) => {
    const kept = assigned[i];
    if (kept) return kept;
    const readable = `${readableRefPath(request.path)}-${suffix(request.path)}`;
    let ref = request.prefix + readable;
    if (clashes(ref)) ref = request.prefix + readable.replace(/\//g, '-');
    const flat = ref;
    for (let n = 2; clashes(ref); n += 1) ref = `${flat}-${n}`;
    return {
      ...request,
      ref: take(ref),
      renamed: isValidRefPath(request.path) ? ('clash' as const) : ('invalid' as const),
    };
  });
}

/** The renames among assigned refs, for the import report's `renamed_refs`. */
export const refRenames = (assigned: readonly AssignedRef[]): RefRename[] =>
  assigned.flatMap((entry) =>
    entry.renamed ? [{ kind: entry.kind, name: entry.name, ref: entry.ref, reason: entry.renamed }] : [],
  );
