import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { loadFindings } from '#vcs/findings';
import { prepareHome } from '#vcs/git-command';
import { lfsObjectPath } from '#vcs/hosted-paths';
import { directorySize } from '#vcs/limits';
import { ForbiddenAddress } from '#vcs/origin';
import { fetchOriginLfs } from '#vcs/origin-lfs';

/**
 * The origin's Git LFS batch API and its hrefs, over HTTP on 127.0.0.1: a small server that answers
 * the batch call as a Git LFS server does, with hrefs on the origin, on another port (a presigned
 * store) and at a forbidden address. Which requests carry the origin's credentials is recorded.
 */
const run = promisify(execFile);
const content = Buffer.from('an object stored elsewhere\n');
const oid = createHash('sha256').update(content).digest('hex');
const pointer = `version https://git-lfs.github.com/spec/v1\noid sha256:${oid}\nsize ${content.length}\n`;

let work: string;
let repo: string;
let home: string;
let origin: Server;
let store: Server;
let hrefFor: () => string;
const seen: Array<{ server: string; url: string; authorization: string | undefined }> = [];

const listen = async (
  name: string,
  handle: (request: IncomingMessage) => { status: number; body: Buffer | string },
) => {
  const server = createServer((request, response) => {
    seen.push({ server: name, url: request.url ?? '', authorization: request.headers.authorization });
    request.resume();
    request.on('end', () => {
      const { status, body } = handle(request);
      response.writeHead(status, { 'Content-Type': 'application/vnd.git-lfs+json' }).end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return server;
};
const portOf = (server: Server) => (server.address() as AddressInfo).port;

/** A bare repository whose one commit (on main, HEAD) holds `files`. */
const makeRepo = async (path: string, files: Record<string, string>) => {
  const git = (args: string[], input?: string) => {
    const child = run('git', args, {
      cwd: path,
      env: { PATH: process.env.PATH, HOME: work, GIT_CONFIG_NOSYSTEM: '1' },
    });
    if (input !== undefined) child.child.stdin?.end(input);
    return child;
  };
  await run('git', ['init', '--bare', '-q', path]);
  let entries = '';
  for (const [name, text] of Object.entries(files))
    entries += `100644 blob ${(await git(['hash-object', '-w', '--stdin'], text)).stdout.trim()}\t${name}\n`;
  const tree = (await git(['mktree'], entries)).stdout.trim();
  const commit = (
    await git(['-c', 'user.name=T', '-c', 'user.email=t@example.com', 'commit-tree', tree, '-m', 'pointer'])
  ).stdout.trim();
  await git(['update-ref', 'refs/heads/main', commit]);
  await git(['symbolic-ref', 'HEAD', 'refs/heads/main']);
};

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'origin-lfs-'));
  repo = join(work, 'out.git');
  home = join(work, 'home');
  await makeRepo(repo, { 'data.bin': pointer });
  await prepareHome(home, [repo]);
  origin = await listen('origin', (request) => {
    if (request.url?.endsWith('/objects/batch'))
      return {
        status: 200,
        body: JSON.stringify({
          objects: [{ oid, size: content.length, actions: { download: { href: hrefFor() } } }],
        }),
      };
    return { status: 200, body: content };
  });
  store = await listen('store', () => ({ status: 200, body: content }));
});

afterAll(async () => {
  origin?.close();
  store?.close();
  if (work) await rm(work, { recursive: true, force: true });
});

const job = () => ({
  access: {
    url: `http://127.0.0.1:${portOf(origin)}/team/project`,
    credentials: async () => ({ username: 'someone', password: 'origin-secret' }),
  },
  guard: { allowedAddresses: ['127.0.0.1'] },
  repoDir: repo,
  workDir: work,
  maxBytes: 10 * 1024 * 1024,
  cacheDir: join(work, 'origin-lfs'),
});
const gitJob = () => ({ home, timeoutMs: 60_000 });

describe('fetching the origin LFS objects', () => {
  it('refuses an href at a forbidden address before sending it anything', async () => {
    seen.length = 0;
    hrefFor = () => 'http://169.254.169.254/latest/meta-data/object';

    const refused = fetchOriginLfs(job(), gitJob());

    await expect(refused).rejects.toBeInstanceOf(ForbiddenAddress);
    await expect(refused).rejects.toThrow(
      "The origin's Git LFS server pointed to an address the importer may not reach",
    );

    expect(seen.map((request) => request.url)).toEqual(['/team/project.git/info/lfs/objects/batch']);
  });

  it("sends the origin's credentials to its batch endpoint but not to a presigned href on another port", async () => {
    seen.length = 0;
    hrefFor = () => `http://127.0.0.1:${portOf(store)}/bucket/${oid}?X-Amz-Signature=abc`;

    const result = await fetchOriginLfs(job(), gitJob());

    expect(result).toMatchObject({ pointers: 1, fetched: 1, missing: 0 });
    expect(seen).toEqual([
      {
        server: 'origin',
        url: '/team/project.git/info/lfs/objects/batch',
        authorization: `Basic ${Buffer.from('someone:origin-secret').toString('base64')}`,
      },
      { server: 'store', url: `/bucket/${oid}?X-Amz-Signature=abc`, authorization: undefined },
    ]);
    expect((await readFile(lfsObjectPath(repo, oid))).equals(content)).toBe(true);
    expect((await loadFindings(work)).missing_lfs_objects).toEqual({ count: 0, listed: [] });
  });

  it('counts the objects against the import limit before fetching any', async () => {
    await rm(lfsObjectPath(repo, oid), { force: true });
    await rm(join(work, 'origin-lfs'), { recursive: true, force: true });
    seen.length = 0;
    const maxBytes = (await directorySize(repo)) + content.length - 1;

    await expect(fetchOriginLfs({ ...job(), maxBytes }, gitJob())).rejects.toThrow(
      /larger than the import limit/,
    );
    expect(seen).toEqual([]);
  });

  it('keeps no object whose content does not match its pointer, and reports it', async () => {
    await rm(lfsObjectPath(repo, oid), { force: true });
    await rm(join(work, 'origin-lfs'), { recursive: true, force: true });
    const wrong = await listen('wrong', () => ({ status: 200, body: Buffer.alloc(content.length, 1) }));
    hrefFor = () => `http://127.0.0.1:${portOf(wrong)}/object`;

    const result = await fetchOriginLfs(job(), gitJob());
    wrong.close();

    expect(result).toMatchObject({ fetched: 0, missing: 1 });
    await expect(readFile(lfsObjectPath(repo, oid))).rejects.toThrow();
    expect((await loadFindings(work)).missing_lfs_objects?.listed).toEqual([
      {
        oid,
        size: content.length,
        path: 'data.bin',
        ref: 'refs/heads/main',
        reason: 'the content the origin sent does not hash to its oid',
      },
    ]);
  });
});

describe("an lfs.url in the .lfsconfig at the origin's HEAD", () => {
  /** The job for a repository like the origin's whose HEAD has `.lfsconfig` naming `lfsUrl`. */
  const configured = async (name: string, lfsUrl: string) => {
    const path = join(work, `${name}.git`);
    const ownHome = join(work, `${name}-home`);
    await makeRepo(path, { '.lfsconfig': `[lfs]\n\turl = ${lfsUrl}\n`, 'data.bin': pointer });
    await prepareHome(ownHome, [path]);
    const workDir = join(work, name);
    return {
      job: { ...job(), repoDir: path, workDir, cacheDir: join(workDir, 'origin-lfs') },
      git: { home: ownHome, timeoutMs: 60_000 },
      path,
    };
  };
  beforeEach(() => {
    hrefFor = () => `http://127.0.0.1:${portOf(store)}/bucket/${oid}`;
  });

  it('fetches the objects from the LFS server it names, which gets no credentials', async () => {
    const elsewhere = await listen('elsewhere', (request) => {
      if (request.url === '/lfs/objects/batch')
        return {
          status: 200,
          body: JSON.stringify({
            objects: [
              {
                oid,
                size: content.length,
                actions: { download: { href: `http://127.0.0.1:${portOf(elsewhere)}/lfs/object` } },
              },
            ],
          }),
        };
      return { status: 200, body: content };
    });
    const {
      job: configuredJob,
      git,
      path,
    } = await configured('elsewhere', `http://127.0.0.1:${portOf(elsewhere)}/lfs/`);
    seen.length = 0;

    const result = await fetchOriginLfs(configuredJob, git);
    elsewhere.close();

    expect(result).toMatchObject({ pointers: 1, fetched: 1, missing: 0 });
    expect(seen).toEqual([
      { server: 'elsewhere', url: '/lfs/objects/batch', authorization: undefined },
      { server: 'elsewhere', url: '/lfs/object', authorization: undefined },
    ]);
    expect((await readFile(lfsObjectPath(path, oid))).equals(content)).toBe(true);
  });

  it("sends the origin's credentials to an lfs.url on the origin's own scheme, host and port", async () => {
    const { job: configuredJob, git } = await configured(
      'same-host',
      `http://127.0.0.1:${portOf(origin)}/storage/project`,
    );
    seen.length = 0;

    const result = await fetchOriginLfs(configuredJob, git);

    expect(result).toMatchObject({ fetched: 1, missing: 0 });
    expect(seen).toEqual([
      {
        server: 'origin',
        url: '/storage/project/objects/batch',
        authorization: `Basic ${Buffer.from('someone:origin-secret').toString('base64')}`,
      },
      { server: 'store', url: `/bucket/${oid}`, authorization: undefined },
    ]);
  });

  it('refuses an lfs.url at a forbidden address before sending anything anywhere', async () => {
    const { job: configuredJob, git } = await configured('forbidden', 'http://169.254.169.254/lfs');
    seen.length = 0;

    const refused = fetchOriginLfs(configuredJob, git);

    await expect(refused).rejects.toBeInstanceOf(ForbiddenAddress);
    await expect(refused).rejects.toThrow(
      "The origin's .lfsconfig names a Git LFS server at an address the importer may not reach",
    );
    expect(seen).toEqual([]);
  });
});
