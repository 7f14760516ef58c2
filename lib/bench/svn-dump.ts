/**
 * A Subversion repository of any length in seconds: the history is written straight as a dump file
 * (`SVN-fs-dump-format-version: 2`, full texts) and loaded with `svnadmin load`, instead of one
 * `svn commit` per revision. Deterministic (a seeded generator): the same options give the same
 * repository, UUID included.
 */
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createReadStream, createWriteStream, type WriteStream } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';

export interface SvnHistoryOptions {
  /** Revisions after r0 (the layout is r1, the first files r2). */
  readonly revisions: number;
  /** Branches `branches/b1…`, each copied from trunk at an even spread over the history. */
  readonly branches: number;
  /** Tags `tags/v1.0…`, each a copy of trunk at an even spread. */
  readonly tags: number;
  /** Files on trunk at r2 (spread over a few directories). */
  readonly files: number;
  readonly authors: readonly string[];
}

export interface SvnHistory {
  /** The repository directory (`svnadmin create`d and loaded). */
  readonly path: string;
  readonly uuid: string;
  readonly youngest: number;
  readonly dumpBytes: number;
}

/** mulberry32: small, fast, good enough to spread edits. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = ['alpha', 'beta', 'gamma', 'delta', 'value', 'count', 'index', 'result', 'buffer', 'state'];

type Props = Readonly<Record<string, string>>;

function propsBlock(props: Props | undefined): Buffer | undefined {
  if (props === undefined) return undefined;
  let text = '';
  for (const [key, value] of Object.entries(props)) {
    text += `K ${Buffer.byteLength(key)}\n${key}\nV ${Buffer.byteLength(value)}\n${value}\n`;
  }
  return Buffer.from(`${text}PROPS-END\n`);
}

interface NodeRecord {
  readonly path: string;
  readonly kind?: 'file' | 'dir';
  readonly action: 'add' | 'change' | 'delete';
  readonly copyFrom?: { readonly rev: number; readonly path: string };
  readonly props?: Props;
  readonly text?: string;
}

class DumpWriter {
  bytes = 0;
  constructor(private readonly out: WriteStream) {}

  private async write(chunk: Buffer | string): Promise<void> {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
    this.bytes += buffer.length;
    if (!this.out.write(buffer)) await once(this.out, 'drain');
  }

  async header(uuid: string): Promise<void> {
    await this.write(`SVN-fs-dump-format-version: 2\n\nUUID: ${uuid}\n\n`);
  }

  async revision(rev: number, props: Props): Promise<void> {
    const block = propsBlock(props) ?? Buffer.alloc(0);
    await this.write(
      `Revision-number: ${rev}\nProp-content-length: ${block.length}\nContent-length: ${block.length}\n\n`,
    );
    await this.write(block);
    await this.write('\n');
  }

  async node(node: NodeRecord): Promise<void> {
    const lines = [`Node-path: ${node.path}`];
    if (node.kind) lines.push(`Node-kind: ${node.kind}`);
    lines.push(`Node-action: ${node.action}`);
    if (node.copyFrom) {
      lines.push(`Node-copyfrom-rev: ${node.copyFrom.rev}`, `Node-copyfrom-path: ${node.copyFrom.path}`);
    }
    const props = propsBlock(node.props);
    const text = node.text === undefined ? undefined : Buffer.from(node.text);
    if (props) lines.push(`Prop-content-length: ${props.length}`);
    if (text) lines.push(`Text-content-length: ${text.length}`);
    if (props || text) lines.push(`Content-length: ${(props?.length ?? 0) + (text?.length ?? 0)}`);
    await this.write(`${lines.join('\n')}\n\n`);
    if (props) await this.write(props);
    if (text) await this.write(text);
    await this.write('\n\n');
  }
}

/** A UUID-shaped string from the generator (svnadmin only checks the form). */
function uuidFrom(next: () => number): string {
  const hex = Array.from({ length: 32 }, () => Math.floor(next() * 16).toString(16)).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20)}`;
}

/**
 * Writes the dump of a standard-layout history to `dumpFile`: r1 the layout (`svn:ignore` of
 * `*.log` and `build` on trunk), r2 the first files (one script with `svn:executable`), then
 * revisions that edit one to three files (a few lines each), now and then add or delete a file,
 * mostly on trunk and sometimes on a live branch; branches and tags are copies of trunk at the
 * previous revision. Authors rotate at random; dates advance an hour a revision.
 */
export async function writeSvnDump(
  dumpFile: string,
  options: SvnHistoryOptions,
): Promise<{ uuid: string; bytes: number }> {
  const next = random(20_240_601);
  const pick = <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)] as T;
  const uuid = uuidFrom(next);
  const out = createWriteStream(dumpFile);
  const dump = new DumpWriter(out);
  const start = Date.UTC(2015, 0, 1);
  const revProps = (rev: number, log: string): Props => ({
    'svn:log': log,
    'svn:author': pick(options.authors),
    'svn:date': new Date(start + rev * 3_600_000).toISOString().replace(/Z$/, '000Z'),
  });
  const line = () =>
    `${pick(WORDS)} = ${pick(WORDS)}(${Math.floor(next() * 1000)}, ${pick(WORDS)}); // ${Math.floor(next() * 1e6)}`;

  // Live lines (file path relative to its tree → lines), one map per tree (trunk, branches/bN).
  const trees = new Map<string, Map<string, string[]>>();
  const trunk = new Map<string, string[]>();
  trees.set('trunk', trunk);

  await dump.header(uuid);
  await dump.revision(0, { 'svn:date': new Date(start).toISOString().replace(/Z$/, '000Z') });
  await dump.revision(1, revProps(1, 'Standard layout'));
  await dump.node({ path: 'trunk', kind: 'dir', action: 'add', props: { 'svn:ignore': '*.log\nbuild\n' } });
  await dump.node({ path: 'branches', kind: 'dir', action: 'add', props: {} });
  await dump.node({ path: 'tags', kind: 'dir', action: 'add', props: {} });

  await dump.revision(2, revProps(2, 'Initial import'));
  const dirs = ['src', 'src/core', 'src/util', 'docs', 'test'];
  for (const dir of dirs) await dump.node({ path: `trunk/${dir}`, kind: 'dir', action: 'add', props: {} });
  for (let i = 0; i < options.files; i++) {
    const path = `${dirs[i % dirs.length]}/file-${i}.txt`;
    const lines = Array.from({ length: 30 + Math.floor(next() * 60) }, line);
    trunk.set(path, lines);
    await dump.node({
      path: `trunk/${path}`,
      kind: 'file',
      action: 'add',
      props: {},
      text: `${lines.join('\n')}\n`,
    });
  }
  trunk.set('build.sh', ['#!/bin/sh', 'make all']);
  await dump.node({
    path: 'trunk/build.sh',
    kind: 'file',
    action: 'add',
    props: { 'svn:executable': '*' },
    text: '#!/bin/sh\nmake all\n',
  });

  const branchAt = new Map<number, string>();
  const tagAt = new Map<number, string>();
  const spread = (count: number, offset: number) =>
    Array.from({ length: count }, (_, i) =>
      Math.max(3, Math.floor(((i + offset) * options.revisions) / (count + 1))),
    );
  for (const [i, rev] of spread(options.branches, 1).entries()) branchAt.set(rev, `b${i + 1}`);
  for (const [i, rev] of spread(options.tags, 1).entries()) {
    let at = rev + 1;
    while (branchAt.has(at) || tagAt.has(at)) at++;
    tagAt.set(at, `v${i + 1}.0`);
  }

  let fileCounter = options.files;
  for (let rev = 3; rev <= options.revisions; rev++) {
    const branch = branchAt.get(rev);
    const tag = tagAt.get(rev);
    if (branch !== undefined) {
      await dump.revision(rev, revProps(rev, `Branch ${branch}`));
      await dump.node({
        path: `branches/${branch}`,
        kind: 'dir',
        action: 'add',
        copyFrom: { rev: rev - 1, path: 'trunk' },
      });
      trees.set(`branches/${branch}`, new Map([...trunk].map(([path, lines]) => [path, [...lines]])));
      continue;
    }
    if (tag !== undefined) {
      await dump.revision(rev, revProps(rev, `Tag ${tag}`));
      await dump.node({
        path: `tags/${tag}`,
        kind: 'dir',
        action: 'add',
        copyFrom: { rev: rev - 1, path: 'trunk' },
      });
      continue;
    }
    // Three in four revisions on trunk; the rest on a live branch.
    const names = [...trees.keys()];
    const treeName = names.length > 1 && next() < 0.25 ? pick(names.slice(1)) : 'trunk';
    const tree = trees.get(treeName) ?? trunk;
    const roll = next();
    if (roll < 0.06) {
      const path = `${pick(dirs)}/file-${fileCounter++}.txt`;
      const lines = Array.from({ length: 20 + Math.floor(next() * 40) }, line);
      tree.set(path, lines);
      await dump.revision(rev, revProps(rev, `Add ${path}`));
      await dump.node({
        path: `${treeName}/${path}`,
        kind: 'file',
        action: 'add',
        props: {},
        text: `${lines.join('\n')}\n`,
      });
      continue;
    }
    if (roll < 0.08 && tree.size > options.files / 2) {
      const path = pick([...tree.keys()].filter((name) => name !== 'build.sh'));
      tree.delete(path);
      await dump.revision(rev, revProps(rev, `Remove ${path}`));
      await dump.node({ path: `${treeName}/${path}`, action: 'delete' });
      continue;
    }
    const paths = [...tree.keys()];
    const edits = 1 + Math.floor(next() * 3);
    await dump.revision(rev, revProps(rev, `Change ${edits} file(s) on ${treeName}\n\nRevision ${rev}.`));
    const touched = new Set<string>();
    for (let e = 0; e < edits; e++) touched.add(pick(paths));
    for (const path of touched) {
      const lines = tree.get(path) ?? [];
      for (let k = 1 + Math.floor(next() * 4); k > 0; k--) {
        const at = Math.floor(next() * (lines.length + 1));
        if (next() < 0.6 && at < lines.length) lines[at] = line();
        else lines.splice(at, 0, line());
      }
      await dump.node({
        path: `${treeName}/${path}`,
        kind: 'file',
        action: 'change',
        text: `${lines.join('\n')}\n`,
      });
    }
  }
  out.end();
  await once(out, 'close');
  return { uuid, bytes: dump.bytes };
}

/** `svnadmin create` + `svnadmin load` (no fsync per revision: a benchmark fixture) of a generated history into `dir/<name>`. */
export async function makeSvnHistory(
  dir: string,
  name: string,
  options: SvnHistoryOptions,
): Promise<SvnHistory> {
  const dumpFile = join(dir, `${name}.dump`);
  const { uuid, bytes } = await writeSvnDump(dumpFile, options);
  const path = join(dir, name);
  await promisify(execFile)('svnadmin', ['create', path]);
  const load = spawn('svnadmin', ['load', '--quiet', '--force-uuid', '--no-flush-to-disk', path], {
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  let stderr = '';
  load.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  createReadStream(dumpFile).pipe(load.stdin);
  const [code] = (await once(load, 'close')) as [number | null];
  if (code !== 0) throw new Error(`svnadmin load failed: ${stderr}`);
  const youngest = Number((await promisify(execFile)('svnlook', ['youngest', path])).stdout.trim());
  return { path, uuid, youngest, dumpBytes: bytes };
}
