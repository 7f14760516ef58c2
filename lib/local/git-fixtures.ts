/**
 * Git origins for tests and benchmarks, built with one `git fast-import` stream: deterministic
 * (fixed dates, identities and pseudo-random content), so the same spec always gives the same
 * commit and tag ids, and fast (10,000 commits with ~100 MB of incompressible content take a few
 * seconds, most of it writing the pack).
 *
 * Shape for a spec: `main` has the bulk of the commits; each extra branch (`feature-1`, …) forks
 * from main after the large file was deleted and adds a few commits of its own; annotated tags
 * `v1`, `v2`, … sit on main at even intervals, the last on its tip, with messages ending in a
 * newline; the large file is added by the second commit and deleted by the third, so it exists
 * only in history. `commits` is the total over all branches. HEAD names `main`.
 */
import { execFile, spawn } from 'node:child_process';
import { createCipheriv, randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { promisify } from 'node:util';

export interface FixtureAuthor {
  readonly name: string;
  readonly email: string;
}

export interface FixtureSpec {
  readonly commits: number;
  readonly branches?: number;
  readonly annotatedTags?: number;
  /** Commit authors (and committers), used in turn; the first is also every tag's tagger. */
  readonly authors?: readonly FixtureAuthor[];
  /** A file over the threshold that lives only in history (added by commit 2, deleted by commit 3). */
  readonly largeFile?: { readonly path: string; readonly bytes: number };
  /** Incompressible bytes each commit writes besides its small text change (default 0). */
  readonly bytesPerCommit?: number;
}

export const DEFAULT_FIXTURE_AUTHORS: readonly FixtureAuthor[] = [
  { name: 'Ada Lovelace', email: 'ada@example.com' },
  { name: 'Grace Hopper', email: 'grace@example.com' },
];

const BASE_TIME = 1_500_000_000;

const run = promisify(execFile);

/**
 * git with nothing of the machine's configuration. glibc's malloc settings stop `git fast-import`
 * from spending most of its time in `brk` (measured: 10.8 s user + 34 s sys by default, 3.4 s in all with these).
 */
const fixtureEnv = (home: string): NodeJS.ProcessEnv => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: home,
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  MALLOC_TOP_PAD_: String(128 * 1024 * 1024),
  MALLOC_TRIM_THRESHOLD_: String(256 * 1024 * 1024),
});
const TEXT_FILES = 16;

/** Makes a bare repository at `dir` (created if absent, must be empty) from `spec`. */
export async function makeFixtureRepository(dir: string, spec: FixtureSpec): Promise<void> {
  const plan = planFixture(spec);
  const home = await mkdtemp(join(tmpdir(), 'fixture-home-'));
  try {
    await mkdir(dir, { recursive: true });
    await run('git', ['init', '--bare', '--quiet', dir], { cwd: dir, env: fixtureEnv(home) });
    await fastImport(dir, home, streamFixture(spec, plan));
    await run('git', ['symbolic-ref', 'HEAD', 'refs/heads/main'], { cwd: dir, env: fixtureEnv(home) });
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}

interface FixturePlan {
  readonly mainCommits: number;
  readonly perBranch: number;
  readonly branchPoints: readonly number[];
  readonly tagPoints: readonly number[];
}

function planFixture(spec: FixtureSpec): FixturePlan {
  const branches = spec.branches ?? 0;
  const tags = spec.annotatedTags ?? 0;
  const perBranch = branches === 0 ? 0 : Math.max(1, Math.min(5, Math.floor(spec.commits / (4 * branches))));
  const mainCommits = spec.commits - branches * perBranch;
  const firstFork = spec.largeFile ? 3 : 0; // forks after the large file's deletion keep it history-only
  if (!Number.isInteger(spec.commits) || mainCommits < Math.max(1, firstFork + 1)) {
    throw new Error(
      `a fixture with ${branches} branches${spec.largeFile ? ' and a large file' : ''} needs more commits`,
    );
  }
  const span = mainCommits - 1 - firstFork;
  const branchPoints = Array.from(
    { length: branches },
    (_, k) => firstFork + Math.floor((span * (k + 1)) / (branches + 1)),
  );
  const tagPoints = Array.from({ length: tags }, (_, t) =>
    Math.max(0, Math.floor(((t + 1) * mainCommits) / tags) - 1),
  );
  return { mainCommits, perBranch, branchPoints, tagPoints };
}

/** Deterministic incompressible bytes: AES-128-CTR of zeros under a key derived from `seed`. */
function pseudoRandom(seed: string, bytes: number): Buffer {
  const key = Buffer.alloc(16);
  key.write(seed.slice(0, 16).padEnd(16, '.'));
  const iv = Buffer.alloc(16);
  iv.write(seed.slice(16, 32).padEnd(16, '.'));
  return createCipheriv('aes-128-ctr', key, iv).update(Buffer.alloc(bytes));
}

function* streamFixture(spec: FixtureSpec, plan: FixturePlan): Generator<Buffer | string> {
  const authors = spec.authors && spec.authors.length > 0 ? spec.authors : DEFAULT_FIXTURE_AUTHORS;
  const payload = spec.bytesPerCommit ?? 0;
  let mark = 0;
  let serial = 0;
  const mainMarks: number[] = [];
  const data = (content: Buffer | string) => {
    const buffer = typeof content === 'string' ? Buffer.from(content) : content;
    return [`data ${buffer.length}\n`, buffer, '\n'];
  };
  function* commit(ref: string, from: number | undefined, label: string, extra: (Buffer | string)[]) {
    const n = serial++;
    const who = authors[n % authors.length] as FixtureAuthor;
    const ident = `${who.name} <${who.email}> ${BASE_TIME + n * 60} +0000`;
    mark += 1;
    yield `commit ${ref}\nmark :${mark}\nauthor ${ident}\ncommitter ${ident}\n`;
    yield* data(`${label}\n\nChange ${n} on ${ref}.\n`);
    if (from !== undefined) yield `from :${from}\n`;
    yield `M 100644 inline files/f-${n % TEXT_FILES}.txt\n`;
    yield* data(`${ref} change ${n}\n`);
    if (payload > 0) {
      yield `M 100644 inline payload/p-${n % TEXT_FILES}.bin\n`;
      yield* data(pseudoRandom(`payload-${n}`, payload));
    }
    yield* extra;
    yield '\n';
    return mark;
  }
  for (let i = 0; i < plan.mainCommits; i++) {
    const extra: (Buffer | string)[] = [];
    if (spec.largeFile && i === 1) {
      extra.push(
        `M 100644 inline ${spec.largeFile.path}\n`,
        ...data(pseudoRandom('large-file', spec.largeFile.bytes)),
      );
    }
    if (spec.largeFile && i === 2) extra.push(`D ${spec.largeFile.path}\n`);
    mainMarks.push(yield* commit('refs/heads/main', undefined, `Commit ${i + 1} on main`, extra));
  }
  for (const [k, point] of plan.branchPoints.entries()) {
    const ref = `refs/heads/feature-${k + 1}`;
    let from: number | undefined = mainMarks[point];
    for (let j = 0; j < plan.perBranch; j++) {
      yield* commit(ref, from, `Feature ${k + 1}, step ${j + 1}`, []);
      from = undefined;
    }
  }
  const tagger = authors[0] as FixtureAuthor;
  for (const [t, point] of plan.tagPoints.entries()) {
    yield `tag v${t + 1}\nfrom :${mainMarks[point]}\n`;
    yield `tagger ${tagger.name} <${tagger.email}> ${BASE_TIME + 1_000_000 + t * 60} +0000\n`;
    yield* data(`Release v${t + 1}\n\nNotes for release ${t + 1}.\n`);
  }
  yield 'done\n';
}

/** Feeds the stream to `git fast-import` with backpressure, so large content is never all in memory. */
function fastImport(dir: string, home: string, stream: Iterable<Buffer | string>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', ['fast-import', '--quiet', '--done'], {
      cwd: dir,
      env: fixtureEnv(home),
      stdio: ['pipe', 'ignore', 'pipe'],
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git fast-import: ${stderr}`))));
    const iterator = stream[Symbol.iterator]();
    const pump = () => {
      for (;;) {
        const next = iterator.next();
        if (next.done) {
          child.stdin.end();
          return;
        }
        if (!child.stdin.write(next.value)) {
          child.stdin.once('drain', pump);
          return;
        }
      }
    };
    child.stdin.on('error', reject);
    pump();
  });
}

export interface LargeCommitOptions {
  /** Bytes of each file (default 10 MiB). */
  readonly partBytes?: number;
  /**
   * Packed as git packs a push (compressed) rather than ready to serve: a clone then spends
   * seconds in `git pack-objects` looking for deltas between the files before it sends a byte.
   */
  readonly slowToServe?: boolean;
}

/**
 * One commit on `main` of `bytes` of random (incompressible) content in files of `partBytes`,
 * written by `git fast-import` into the repository at `gitDir` (it must exist). Packed, uncompressed and
 * without deltas, so git serves and receives it without recompressing: a transfer of it measures
 * the transfer, not zlib (unless `slowToServe`).
 */
export async function writeLargeCommit(
  gitDir: string,
  bytes: number,
  home: string,
  { partBytes: part = 10 * 1024 * 1024, slowToServe = false }: LargeCommitOptions = {},
): Promise<void> {
  const files = Math.ceil(bytes / part);
  async function* stream() {
    for (let i = 1; i <= files; i++) {
      const content = randomBytes(Math.min(part, bytes - (i - 1) * part));
      yield Buffer.from(`blob\nmark :${i}\ndata ${content.length}\n`);
      yield content;
      yield Buffer.from('\n');
    }
    const paths = Array.from({ length: files }, (_, i) => `M 100644 :${i + 1} part-${i + 1}.bin\n`);
    yield Buffer.from(
      `commit refs/heads/main\ncommitter Test <test@example.com> 1700000000 +0000\ndata 4\nbig\n${paths.join('')}\n`,
    );
  }
  const options = slowToServe
    ? []
    : ['-c', 'pack.compression=0', '-c', 'fastimport.unpackLimit=0', '-c', 'core.bigFileThreshold=1m'];
  const child = spawn('git', [...options, 'fast-import', '--quiet'], {
    env: { PATH: process.env.PATH, GIT_DIR: gitDir, GIT_CONFIG_NOSYSTEM: '1', HOME: home },
    stdio: ['pipe', 'ignore', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.on('close', resolve));
  await pipeline(Readable.from(stream()), child.stdin);
  const code = await exited;
  if (code !== 0) throw new Error(`git fast-import exited with ${code}`);
}
