/**
 * svn-all-fast-export's rules for a Subversion project, and the Git ref of each of its branches
 * and tags. Every directory that ever existed under `branches/` or `tags/` gets its own valid ref
 * through `assignRefNames` (`#domain/ref-names`): a name Git takes keeps it, any other is renamed
 * and gets a rule of its own, so no branch or tag is dropped and none fails the conversion.
 */
import {
  type AssignedRef,
  assignRefNames,
  type RefRename,
  type RefRequest,
  refRenames,
} from '#domain/ref-names';
import { decodeXml, localUrl, runSvn, SvnFailed } from './command.ts';

/** A branch or tag name the generic rules can carry as it is: `\1` into its ref. */
const REF_NAME = '([^/ ~^:?*\\[\\\\.-][^/ ~^:?*\\[\\\\]*)';
const PLAIN_NAME = new RegExp(`^${REF_NAME}$`);

/** What a rules file cannot carry in a `branch` line: `#` starts a comment, whitespace ends the value. */
const UNWRITABLE = /[#\s]/gu;

/** A QRegExp matching exactly `text`: every character but ASCII letters and digits as `\xhhhh`. */
const literalRule = (text: string) =>
  [...text]
    .map((char) =>
      /[A-Za-z0-9_]/.test(char)
        ? char
        : [
            ...Buffer.from(char, 'utf16le')
              .toString('hex')
              .matchAll(/(..)(..)/g),
          ]
            .map((unit) => `\\x${unit[2]}${unit[1]}`)
            .join(''),
    )
    .join('');

/** Code points HFS+ ignores in names (`#domain/unstorable-paths`), as QRegExp writes them. */
const HFS_IGNORED = '[\\x200c-\\x200f\\x202a-\\x202e\\x206a-\\x206f\\xfeff]*';
const anyCase = (name: string) => [...name].map((char) => `[${char}${char.toUpperCase()}]`);

/**
 * A path component Git must not store: `.git` or `.hg` in any case, with HFS's ignored code
 * points, NTFS's trailing dots and spaces, alternate streams and short names (`git~1`): the rule
 * of `#domain/unstorable-paths` as a QRegExp (Subversion paths hold no `..`, NUL or leading `/`).
 */
const METADATA_COMPONENT = `(?:${['git', 'hg']
  .flatMap((name) => [
    `${HFS_IGNORED}[.]${HFS_IGNORED}${anyCase(name).join(HFS_IGNORED)}${HFS_IGNORED}`,
    `${anyCase(name).join('')}~1`,
  ])
  .join('|')})[. ]*(?::[^/]*)?`;

/** Rules that drop every path with such a component below `prefix`; they come first. */
const unstorableRule = (prefix: string) => `match ${prefix}(?:.*/)?${METADATA_COMPONENT}(?:/|$)\nend match\n`;

/** The branch and tag names of a standard layout, each directly under `branches/` or `tags/`. */
export interface LayoutNames {
  readonly branches: readonly string[];
  readonly tags: readonly string[];
}

type SvnRefRequest = RefRequest<'trunk' | 'branch' | 'tag'> & { readonly folder?: 'branches' | 'tags' };

const sorted = (names: readonly string[]) => [...new Set(names)].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));

/**
 * The ref of trunk (`main`) and of every branch and tag, in the order that decides who keeps a
 * contested name: trunk, a branch named `main` (it asks for `branches/main`, trunk being `main`),
 * the other branches, then tags, each sorted by name. `#` and whitespace count as refused here,
 * since a rules file cannot carry them (see `UNWRITABLE`), so such names are renamed as Git-refused
 * ones are.
 */
export function svnRefNames(names: LayoutNames): AssignedRef<SvnRefRequest>[] {
  const request = (kind: 'branch' | 'tag', name: string): SvnRefRequest => ({
    kind,
    name,
    prefix: kind === 'branch' ? 'refs/heads/' : 'refs/tags/',
    path: kind === 'branch' && name === 'main' ? 'branches/main' : name.replace(UNWRITABLE, '\u0001'),
    folder: kind === 'branch' ? 'branches' : 'tags',
  });
  return assignRefNames<SvnRefRequest>([
    { kind: 'trunk', name: 'trunk', prefix: 'refs/heads/', path: 'main' },
    ...(names.branches.includes('main') ? [request('branch', 'main')] : []),
    ...sorted(names.branches)
      .filter((name) => name !== 'main')
      .map((name) => request('branch', name)),
    ...sorted(names.tags).map((name) => request('tag', name)),
  ]);
}

/**
 * svn-all-fast-export rules for the project at `path` (repository-relative, no slashes around).
 * Rules match in order: trunk, then one rule for each branch or tag whose name the generic rules
 * cannot carry to its ref, then the generic rules (`branches/X` → `X`, `tags/X` → annotated `X`,
 * a branch named `main` → `branches/main`). Returns the rules and the renames among the refs.
 */
export function conversionRules(
  path: string,
  layout: LayoutNames | undefined,
  output: string,
): { rules: string; renames: RefRename[] } {
  const prefix = path === '' ? '/' : `/${literalRule(path)}/`;
  const rule = (match: string, branch: string, annotated = false) =>
    `match ${match}\n  repository ${output}\n  branch ${branch}\n${annotated ? '  annotated true\n' : ''}end match\n`;
  if (layout === undefined)
    return {
      rules: [
        `create repository ${output}\nend repository\n`,
        unstorableRule(prefix),
        rule(prefix, 'main'),
        'match /\nend match\n',
      ].join('\n'),
      renames: [],
    };
  const assigned = svnRefNames(layout);
  const own = assigned.flatMap((entry) => {
    if (entry.folder === undefined) return [];
    const generic = entry.ref === `${entry.prefix}${entry.path}` && PLAIN_NAME.test(entry.name);
    if (generic) return [];
    const target = entry.kind === 'tag' ? entry.ref : entry.ref.slice('refs/heads/'.length);
    return [rule(`${prefix}${entry.folder}/${literalRule(entry.name)}/`, target, entry.kind === 'tag')];
  });
  return {
    rules: [
      `create repository ${output}\nend repository\n`,
      unstorableRule(prefix),
      rule(`${prefix}trunk/`, 'main'),
      ...own,
      rule(`${prefix}branches/main/`, 'branches/main'),
      rule(`${prefix}branches/${REF_NAME}/`, '\\1'),
      rule(`${prefix}tags/${REF_NAME}/`, 'refs/tags/\\1', true),
      'match /\nend match\n',
    ].join('\n'),
    renames: refRenames(assigned),
  };
}

/**
 * Every name that ever existed directly under `<path>/branches/` and `<path>/tags/` in the mirror
 * (`svn log -v --xml`, whose paths are UTF-8 whatever the locale, unlike svnlook's): each changed
 * path below them names one, and where `branches/` or `tags/` (or a folder above) arrived by a
 * copy, its listing at that revision names those that came with it. From `from` on, the names
 * the revisions from there brought: what each revision names depends on it alone, so a sync adds
 * them to the names of the revisions before (`rules-plan.ts`) and reads no older revision.
 */
export async function layoutNames(
  mirror: string,
  path: string,
  home: string,
  from = 0,
): Promise<LayoutNames> {
  const base = path === '' ? '/' : `/${path}/`;
  const svn = (args: string[]) =>
    runSvn('svn', args, { cwd: home, home, timeoutMs: 600_000, maxStdoutBytes: 512 * 1024 * 1024 });
  const found = { branches: new Set<string>(), tags: new Set<string>() };
  const copied: { folder: 'branches' | 'tags'; revision: string }[] = [];
  const range = from > 0 ? ['-r', `${from}:HEAD`] : [];
  const log = (await svn(['log', '-v', '--xml', ...range, '--', localUrl(mirror, '', 'HEAD')])).toString(
    'utf8',
  );
  for (const entry of log.matchAll(/<logentry\s+revision="(\d+)"[\s\S]*?<\/logentry>/g)) {
    for (const change of (entry[0] ?? '').matchAll(/<path\b([^>]*)>([^<]*)<\/path>/g)) {
      const attributes = change[1] ?? '';
      const changed = decodeXml(change[2] ?? '');
      for (const folder of ['branches', 'tags'] as const) {
        const under = `${base}${folder}/`;
        if (changed.startsWith(under)) {
          const [name = '', ...rest] = changed.slice(under.length).split('/');
          if (name !== '' && (rest.length > 0 || !/\bkind="file"/.test(attributes))) found[folder].add(name);
        } else if (under.startsWith(`${changed.replace(/\/$/, '')}/`) && /\bcopyfrom-path=/.test(attributes))
          copied.push({ folder, revision: entry[1] ?? '' });
      }
    }
  }
  for (const { folder, revision } of copied) {
    const target = localUrl(mirror, `${base}${folder}`.slice(1), revision);
    try {
      const xml = (await svn(['list', '--xml', '--', target])).toString('utf8');
      for (const dir of xml.matchAll(/<entry\s+kind="dir"\s*>\s*<name>([^<]*)<\/name>/g))
        found[folder].add(decodeXml(dir[1] ?? ''));
    } catch (error) {
      if (!(error instanceof SvnFailed) || error.timedOut) throw error; // copied without it
    }
  }
  return { branches: [...found.branches], tags: [...found.tags] };
}

/** Where a project path lands: the ref, svn-all-fast-export's name for it, the path inside it. */
export interface RefPlace {
  readonly ref: string;
  /** The `branch` of the rules (and of svn-all-fast-export's log): `X` for a branch, `refs/tags/X`. */
  readonly branch: string;
  readonly inner: string;
}

export interface SvnRefs {
  /** The ref holding a project-relative path; undefined for a path the rules drop. */
  locate(path: string): RefPlace | undefined;
  /** The origin name of the branch or tag whose Git name is `name` (`trunk` for `main`). */
  originName(kind: 'branch' | 'tag', name: string): string;
}

/** The refs of a project, as `conversionRules` writes them (standard layout, or the whole tree). */
export function svnRefs(layout: LayoutNames | undefined): SvnRefs {
  const place = (ref: string, inner: string): RefPlace => ({
    ref,
    branch: ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : ref,
    inner,
  });
  if (layout === undefined)
    return {
      locate: (path) => place('refs/heads/main', path),
      originName: (_kind, name) => name,
    };
  const assigned = svnRefNames(layout);
  const byFolder = new Map(
    assigned.filter((entry) => entry.folder).map((entry) => [`${entry.folder}/${entry.name}`, entry.ref]),
  );
  const byRef = new Map(assigned.map((entry) => [entry.ref, entry.name]));
  return {
    locate(path) {
      const [top = '', name = '', ...rest] = path.split('/');
      if (top === 'trunk') return place('refs/heads/main', path.split('/').slice(1).join('/'));
      const ref = byFolder.get(`${top}/${name}`);
      return ref === undefined ? undefined : place(ref, rest.join('/'));
    },
    originName: (kind, name) => byRef.get(`${kind === 'tag' ? 'refs/tags/' : 'refs/heads/'}${name}`) ?? name,
  };
}
