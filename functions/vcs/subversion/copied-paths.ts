/**
 * The files a folder copy brings to a path Git must not store (issue 28), for the history scan
 * (`history-findings.ts`) to list beside the files added there. The dump holds a copy as one node,
 * so the files are read from the mirror (`svn list -R --xml` of the copy's source at the copied
 * revision: UTF-8 paths whatever the locale), and only for the copies that can bring one:
 *
 * - a copy into the project to a path with such a component (`svn cp trunk/lib trunk/.git`);
 * - a copy whose source holds such a name (a `vendor` folder holding `.hg/`, a branch of a trunk
 *   that got a `.git` folder). Every such name in the repository arrived by a node at its own path
 *   or inside a copy read here, so the scan knows them (`names`: path → the first revision it
 *   appeared in, kept with the scan's tally so a sync knows those of the revisions before it).
 *   A name deleted since is still known: its copies are read for nothing, never missed.
 *
 * A history without such names reads nothing more than its dump.
 */
import { componentReason } from '#domain/unstorable-paths';
import { decodeXml, localUrl, runSvn } from './command.ts';
import type { DumpNode } from './dump-reader.ts';

/** Where the mirror is read. */
export interface MirrorAt {
  readonly mirror: string;
  readonly home: string;
  readonly timeoutMs: number;
}

interface FolderCopy {
  /** The copy node's place in the dump. */
  readonly place: number;
  readonly revision: number;
  readonly path: string;
  readonly from: string;
  readonly fromRevision: number;
  /** Paths below it that later nodes of the same revision deleted or replaced. */
  readonly removed: string[];
}

/** Each leading part of `path` that ends in a name Git must not store (`a/.git`, `a/.git/b/.hg`). */
const unstorablePrefixes = (path: string): string[] => {
  const parts = path.split('/');
  return parts.flatMap((name, i) =>
    componentReason(name) === undefined ? [] : [parts.slice(0, i + 1).join('/')],
  );
};

const within = (path: string, folder: string) => folder === '' || path.startsWith(`${folder}/`);

export class CopiedPaths {
  private readonly copies: FolderCopy[] = [];

  constructor(
    private readonly names: Map<string, number>,
    /** Whether a repository path is in the imported project. */
    private readonly inProject: (path: string) => boolean,
  ) {}

  /** Reads one node of the dump, `place` its position there. */
  node(node: DumpNode, place: number): void {
    if (node.action === 'delete' || node.action === 'replace')
      for (let i = this.copies.length - 1; i >= 0; i--) {
        const copy = this.copies[i];
        if (copy === undefined || copy.revision !== node.revision) break;
        if (within(node.path, copy.path)) copy.removed.push(node.path);
      }
    if (node.action !== 'add' && node.action !== 'replace') return;
    this.learn(node.path, node.revision);
    if (node.kind === 'dir' && node.copyFrom !== undefined && node.copyFromRevision !== undefined)
      this.copies.push({
        place,
        revision: node.revision,
        path: node.path,
        from: node.copyFrom,
        fromRevision: node.copyFromRevision,
        removed: [],
      });
  }

  /**
   * Reads the copies that can bring such a file, in the dump's order, and calls `found` with each
   * file a copy into the project brought (its repository path; the caller says whether the rules
   * drop it).
   */
  async expand(at: MirrorAt, found: (place: number, revision: number, path: string) => void): Promise<void> {
    for (const copy of this.copies) {
      const reported = this.inProject(copy.path);
      const toUnstorable = reported && unstorablePrefixes(copy.path).length > 0;
      const holding = [...this.names].some(
        ([name, revision]) => revision <= copy.fromRevision && within(name, copy.from),
      );
      if (!toUnstorable && !holding) continue;
      for (const entry of await listTree(at, copy.from, copy.fromRevision)) {
        const path = `${copy.path}/${entry.name}`;
        if (copy.removed.some((removed) => path === removed || within(path, removed))) continue;
        this.learn(path, copy.revision);
        if (reported && entry.kind === 'file') found(copy.place, copy.revision, path);
      }
    }
  }

  private learn(path: string, revision: number): void {
    for (const prefix of unstorablePrefixes(path))
      this.names.set(prefix, Math.min(this.names.get(prefix) ?? revision, revision));
  }
}

/** Every file and folder below `path` at `revision`, relative to it, as `svn list` orders them. */
async function listTree(
  at: MirrorAt,
  path: string,
  revision: number,
): Promise<{ kind: 'file' | 'dir'; name: string }[]> {
  const xml = (
    await runSvn('svn', ['list', '-R', '--xml', '--', localUrl(at.mirror, path, revision)], {
      cwd: at.home,
      home: at.home,
      timeoutMs: at.timeoutMs,
      maxStdoutBytes: 1024 * 1024 * 1024,
    })
  ).toString('utf8');
  return [...xml.matchAll(/<entry\s+kind="(file|dir)"\s*>\s*<name>([^<]*)<\/name>/g)].map((entry) => ({
    kind: entry[1] === 'file' ? 'file' : 'dir',
    name: decodeXml(entry[2] ?? ''),
  }));
}
