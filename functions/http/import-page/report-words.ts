import type { FindingEntry, FindingKind, LargeFilesAction } from '#domain/import-report';
import type { ImportChoices } from '#domain/imports';

/*
 * The import report in plain words: the one place for its sentences. Each kind of finding has a
 * template (the mapped type over `FindingKind` makes TypeScript fail when a kind is added without
 * one); the progress page puts the first few entries after it. Entries are the API's flat fields
 * (docs/importing.md, "The import report"); a field a kind does not have is skipped, never guessed.
 */

/** `1 branch`, `3 branches`. */
export const counted = (count: number, one: string, many: string): string =>
  `${count.toLocaleString('en-US')} ${count === 1 ? one : many}`;

const was = (count: number): string => (count === 1 ? 'was' : 'were');

const text = (entry: FindingEntry, field: string): string | undefined => {
  const value = entry[field];
  return value === undefined || value === null || value === '' ? undefined : String(value);
};

/** `refs/heads/branches/a` → `branches/a`: the name a user sees in Git. */
const shortRef = (ref: string): string => ref.replace(/^refs\/(heads|tags)\//, '');

/**
 * An entry as a name: `origin name → Git ref` when it says where something went; otherwise its
 * path (with the revision when given), its name, or its revision or changeset.
 */
export function entryLabel(entry: FindingEntry): string {
  const from = text(entry, 'origin_name') ?? text(entry, 'name');
  const to = text(entry, 'ref') ?? text(entry, 'kept_as');
  if (from !== undefined && to !== undefined) return `${from} → ${shortRef(to)}`;
  const path = text(entry, 'path');
  const at = text(entry, 'revision') ?? text(entry, 'changeset');
  if (path !== undefined) return at === undefined ? path : `${path}@${at}`;
  return (
    from ??
    at ??
    Object.values(entry)
      .filter((value) => value !== null)
      .join(' ')
  );
}

interface KindWords {
  /** The sentence before the listed names, for `count` findings (never 0) and the owner's choices. */
  readonly sentence: (count: number, choices: ImportChoices) => string;
  /** One entry as shown in the list after the sentence. */
  readonly label: (entry: FindingEntry) => string;
}

const plain = (sentence: KindWords['sentence']): KindWords => ({ sentence, label: entryLabel });

/** `r12` for a Subversion revision, the first 12 hex of a Mercurial changeset. */
const revisionLabel = (entry: FindingEntry): string | undefined => {
  const revision = text(entry, 'revision');
  if (revision !== undefined && /^\d+$/.test(revision)) return `r${revision}`;
  return text(entry, 'changeset')?.slice(0, 12) ?? revision;
};

/** A deleted branch or tag: where it was kept, or the revision that deleted it. */
const deletedRefLabel = (entry: FindingEntry): string => {
  const name = text(entry, 'origin_name') ?? entryLabel(entry);
  const ref = text(entry, 'ref');
  if (ref !== undefined) return `${name} → ${shortRef(ref)}`;
  const at = revisionLabel(entry);
  return at === undefined ? name : `${name} (deleted in ${at})`;
};

export const FINDING_WORDS: { readonly [K in FindingKind]: KindWords } = {
  renamed_refs: plain(
    (n) =>
      `${counted(n, 'branch, bookmark or tag', 'branches, bookmarks or tags')} ${was(n)} renamed (Git refuses their names, or they clash with another ref)`,
  ),
  kept_deleted_refs: {
    sentence: (n, choices) =>
      choices.keepDeletedRefs
        ? `${counted(n, 'branch or tag', 'branches and tags')} deleted in the origin ${was(n)} kept as tags`
        : `${counted(n, 'branch or tag', 'branches and tags')} deleted in the origin ${was(n)} not kept`,
    label: deletedRefLabel,
  },
  closed_branches: plain(
    (n) => `${counted(n, 'closed Mercurial branch', 'closed Mercurial branches')} ${was(n)} kept as branches`,
  ),
  empty_directories: plain((n, choices) =>
    choices.keepEmptyDirectories
      ? `${counted(n, 'empty directory', 'empty directories')} ${was(n)} kept, each with an empty .gitignore file`
      : `${counted(n, 'empty directory', 'empty directories')} ${was(n)} not kept (Git stores no empty directories)`,
  ),
  outside_layout_paths: plain(
    (n) =>
      `${counted(n, 'path', 'paths')} outside the trunk, branches and tags layout ${was(n)} not imported`,
  ),
  svn_externals: {
    sentence: (n) =>
      `${counted(n, 'svn:externals definition', 'svn:externals definitions')} ${was(n)} not followed`,
    label: (entry) => {
      const where = [text(entry, 'path'), revisionLabel(entry)].filter(Boolean).join(' in ');
      const definition = text(entry, 'definition')
        ?.trim()
        .split(/\s*\n\s*/)
        .join('; ');
      return definition === undefined ? where : `${where}: ${definition}`;
    },
  },
  svn_properties: {
    sentence: (n) =>
      `${counted(n, 'Subversion property', 'Subversion properties')} without a Git equivalent ${was(n)} dropped`,
    label: (entry) => {
      const name = text(entry, 'name') ?? entryLabel(entry);
      if (text(entry, 'scope') === 'revision') return `${name} (a revision property)`;
      const paths = Number(entry.paths ?? 0);
      return paths > 0 ? `${name} (on ${counted(paths, 'path', 'paths')})` : name;
    },
  },
  svn_mergeinfo: plain(
    (n) =>
      `${counted(n, 'svn:mergeinfo change', 'svn:mergeinfo changes')} ${was(n)} not carried over as merge information (a merge commit is made only where a branch was copied)`,
  ),
  authorless_commits: {
    sentence: (n) =>
      `${counted(n, 'revision or changeset', 'revisions or changesets')} without an author ${was(n)} given the author “(no author)”, which you can map`,
    label: (entry) => revisionLabel(entry) ?? entryLabel(entry),
  },
  hg_subrepos: {
    sentence: (n) =>
      `${counted(n, 'Mercurial subrepository', 'Mercurial subrepositories')} ${was(n)} not followed (.hgsub and .hgsubstate stay files)`,
    label: (entry) => {
      const path = text(entry, 'path') ?? entryLabel(entry);
      const source = text(entry, 'source');
      return source === undefined ? path : `${path} (${source})`;
    },
  },
  tfvc_labels: plain((n) => `${counted(n, 'TFVC label', 'TFVC labels')} ${was(n)} not carried over`),
  tfvc_shelvesets: plain(
    (n) => `${counted(n, 'TFVC shelveset', 'TFVC shelvesets')} ${was(n)} not carried over`,
  ),
  tfvc_branches: plain(
    (n) =>
      `${counted(n, 'TFVC branch relationship', 'TFVC branch relationships')} ${was(n)} not kept (branch folders stay folders)`,
  ),
  unstorable_paths: {
    sentence: (n) =>
      `${counted(n, 'path', 'paths')} Git cannot store ${was(n)} left out of the imported history; everything else was imported`,
    label: (entry) => {
      // A TFVC changeset is a number, told as TFVC writes it (`C42`); Mercurial's is 40 hex.
      const tfvc = typeof entry.changeset === 'number' ? `C${entry.changeset}` : undefined;
      const at =
        tfvc ??
        text(entry, 'changeset')?.slice(0, 12) ??
        revisionLabel(entry) ??
        text(entry, 'commit')?.slice(0, 12);
      const why = UNSTORABLE_WORDS[text(entry, 'reason') ?? ''];
      const clash = text(entry, 'clash');
      const reason = why === undefined ? undefined : clash === undefined ? why : `${why} ${clash}`;
      return [JSON.stringify(text(entry, 'path') ?? ''), at && `in ${at}`, reason && `(${reason})`]
        .filter(Boolean)
        .join(' ');
    },
  },
  missing_lfs_objects: {
    sentence: (n) =>
      `${counted(n, 'Git LFS object', 'Git LFS objects')} the history points to ${was(n)} not available from the origin (the pointer files are kept)`,
    label: (entry) => {
      const path = text(entry, 'path') ?? entryLabel(entry);
      const ref = text(entry, 'ref');
      return ref === undefined ? path : `${path} (${shortRef(ref)})`;
    },
  },
};

/** Why a path was left out (`#domain/unstorable-paths`), in words. */
const UNSTORABLE_WORDS: Readonly<Record<string, string>> = {
  absolute: 'an absolute path',
  nul: 'holds a NUL byte',
  empty_component: 'an empty folder name',
  slash_in_name: 'a file or folder name holding a “/”, which no checkout can write as one name',
  dot_component: 'a “.” or “..” folder, which climbs out of the repository',
  git_metadata: 'a .git folder, which Git refuses in any spelling',
  hg_metadata: 'a .hg folder, Mercurial’s own metadata',
  beneath_file: 'beneath the file',
  file_and_folder: 'a file named like the folder of',
};

/** `104857600` → `104.9 MB` (decimal units, as GitHub showed sizes). */
export function formatBytes(bytes: number): string {
  const units = ['bytes', 'kB', 'MB', 'GB', 'TB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1000 && unit < units.length - 1) {
    value /= 1000;
    unit++;
  }
  return unit === 0 ? `${bytes} bytes` : `${value.toFixed(1)} ${units[unit]}`;
}

/** What became of the files over the size limit, as a sentence (`size` already in words). */
export function largeFilesSentence(action: LargeFilesAction, count: number, size: string): string {
  const files = `${counted(count, 'file', 'files')} over the size limit (${size})`;
  switch (action) {
    case 'none':
      return 'No file is over the size limit.';
    case 'undecided':
      return `${files} ${count === 1 ? 'waits' : 'wait'} for your choice: keep them with Git LFS or remove them.`;
    case 'moved_to_lfs':
      return `${files} ${was(count)} moved to Git LFS`;
    case 'removed':
      return `${files} ${was(count)} removed from the history`;
  }
}

/** The choices an owner has, each with what it does and its API field (`PUT`, or a restarting `PATCH`). */
export const CHOICE_WORDS: {
  readonly [K in keyof ImportChoices]: { readonly field: string; readonly yes: string; readonly no: string };
} = {
  keepEmptyDirectories: {
    field: 'keep_empty_directories',
    yes: 'Empty directories are kept, each with an empty .gitignore file.',
    no: 'Empty directories are not kept.',
  },
  keepDeletedRefs: {
    field: 'keep_refs_deleted_in_history',
    yes: 'Branches and tags deleted in the history before the import are kept as tags named backups/<name>@<revision>.',
    no: 'Branches and tags deleted in the history before the import are not kept.',
  },
};
