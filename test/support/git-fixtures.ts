/**
 * Fixture Git repositories, generated with `git fast-import` (thousands of commits in a second).
 * Deterministic: the same spec gives the same commit ids.
 */
import { spawn } from 'node:child_process';
import { createCipheriv } from 'node:crypto';
import { once } from 'node:events';
import { mkdir } from 'node:fs/promises';
import type { Writable } from 'node:stream';

export interface FixtureSpec {
  /** Commits over all branches. */
  readonly commits: number;
  /** Branches including `main` (default 1); the others fork from `main` and carry 20% of the commits. */
  readonly branches?: number;
  /** Annotated tags on `main`, spread over its history (`v1`, `v2`, …). */
  readonly annotatedTags?: number;
  /** Commit authors (and committers), taken in turn; default one author. */
  readonly authors?: readonly { name: string; email: string }[];
  /** A file of this size (incompressible bytes) added in the second commit of `main`. */
  readonly largeFile?: { path: string; bytes: number };
}

const BASE_TIME = 1_600_000_000;
const env = () => ({
  PATH: process.env.PATH ?? '/usr/bin:/bin',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  LC_ALL: 'C',
});

function run(args: readonly string[], cwd: string, feed?: (stdin: Writable) => Promise<void>): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: env(), stdio: ['pipe', 'ignore', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString()).slice(-4000);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve() : reject(new Error(`git ${args[0]}: ${stderr}`))));
    if (feed) feed(child.stdin).then(() => child.stdin.end(), reject);
    else child.stdin.end();
  });
}

/** Deterministic incompressible bytes (AES-CTR of zeros). */
function* noise(bytes: number, seed: string): Generator<Buffer> {
  const cipher = createCipheriv('aes-128-ctr', Buffer.alloc(16, seed), Buffer.alloc(16, 0));
  const zeros = Buffer.alloc(Math.min(bytes, 1 << 20));
  for (let left = bytes; left > 0; left -= zeros.length) {
    yield cipher.update(left >= zeros.length ? zeros : zeros.subarray(0, left));
  }
}

/** A bare repository at `dir` (created) with `main` as HEAD. */
export async function makeFixtureRepository(
  dir: string,
  spec: {
    commits: number;
    branches?: number;
    annotatedTags?: number;
    authors?: readonly { name: string; email: string }[];
    largeFile?: { path: string; bytes: number };
  },
): Promise<void> {
  await mkdir(dir, { recursive: true });
  await run(['-c', 'init.defaultBranch=main', 'init', '--bare', '--quiet', dir], dir);
  const branches = Math.max(1, spec.branches ?? 1);
  const authors = spec.authors?.length
    ? spec.authors
    : [{ name: 'Fixture Author', email: 'author@example.com' }];
  const perBranch = branches > 1 ? Math.max(1, Math.floor((spec.commits * 0.2) / (branches - 1))) : 0;
  const mainCount = Math.max(1, spec.commits - perBranch * (branches - 1));
  const tags = Math.min(spec.annotatedTags ?? 0, mainCount);

  await run(['fast-import', '--quiet', '--done'], dir, async (stdin) => {
    const write = async (chunk: string | Buffer) => {
      if (!stdin.write(chunk)) await once(stdin, 'drain');
    };
    let mark = 0;
    let time = BASE_TIME;
    const commit = async (
      ref: string,
      index: number,
      from: number | undefined,
      extra?: () => Promise<void>,
    ) => {
      mark += 1;
      time += 60;
      const who = authors[index % authors.length] ?? authors[0];
      const ident = `${who?.name} <${who?.email}> ${time} +0000`;
      const message = `${ref.replace('refs/heads/', '')}: change ${index}\n`;
      const file = `src/file-${index % 97}.txt`;
      const content = `${ref} ${index}\n${[...noise(512, `${ref}${index}`)].map((b) => b.toString('hex')).join('\n')}\n`;
      await write(
        `commit ${ref}\nmark :${mark}\nauthor ${ident}\ncommitter ${ident}\ndata ${Buffer.byteLength(message)}\n${message}`,
      );
      if (from !== undefined) await write(`from :${from}\n`);
      await write(`M 100644 inline ${file}\ndata ${Buffer.byteLength(content)}\n${content}\n`);
      if (extra) await extra();
      return mark;
    };
    const mainMarks: number[] = [];
    for (let i = 0; i < mainCount; i++) {
      const large =
        spec.largeFile && i === Math.min(1, mainCount - 1)
          ? async () => {
              const { path, bytes } = spec.largeFile as { path: string; bytes: number };
              await write(`M 100644 inline ${path}\ndata ${bytes}\n`);
              for (const part of noise(bytes, 'large')) await write(part);
              await write('\n');
            }
          : undefined;
      mainMarks.push(await commit('refs/heads/main', i, undefined, large));
    }
    for (let b = 1; b < branches; b++) {
      const fork = mainMarks[Math.floor((mainCount * b) / branches)] ?? mainMarks[0];
      for (let i = 0; i < perBranch; i++)
        await commit(`refs/heads/branch-${b}`, i, i === 0 ? fork : undefined);
    }
    for (let t = 1; t <= tags; t++) {
      const target = mainMarks[Math.floor((mainCount * t) / (tags + 1))] ?? mainMarks[0];
      const who = authors[0];
      const message = `Release ${t}\n`;
      await write(
        `tag v${t}\nfrom :${target}\ntagger ${who?.name} <${who?.email}> ${BASE_TIME + t} +0000\ndata ${Buffer.byteLength(message)}\n${message}`,
      );
    }
    await write('done\n');
  });
}
