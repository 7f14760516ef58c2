import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { listAuthors } from '#data/imports/items';
import { AUTHORS_SHOWN } from '#http/import-page/views';
import { API_GATEWAY_LIMITS } from '#local/http-server';
import { createUser } from '#test/fixtures';
import { createRepository, seedImport } from '#test/import-seed';
import { startTestStack } from '#test/stack';
import { WebClient } from '#test/web-client';

/*
 * GET …/import/authors and the progress page with more authors than one answer can carry (issue
 * 25, item 7). The gateway's payload limit is lowered to 256 KB so that 1,000 authors stand for the
 * ~16,000 that overflow Lambda's 6 MB: the unpaged list (and the progress page's 500 rows) was a
 * 502 here as it was there.
 */

const LIMIT = 256 * 1024;
const AUTHORS = 1000;
const PREVIEW = 'application/vnd.github.barred-rock-preview';

type Stack = Awaited<ReturnType<typeof startTestStack>>;
type User = Awaited<ReturnType<typeof createUser>>;
let stack: Stack;
let owner: User;
let ids: number[];
const REPO = 'many-authors';

beforeAll(async () => {
  stack = await startTestStack({ gatewayLimits: { ...API_GATEWAY_LIMITS, maxInvocationBytes: LIMIT } });
  owner = await createUser(stack.endpointsFile, 'prolific', 'prolific-pass-1');
  await createRepository(stack.baseUrl, owner.login, owner.password, REPO);
  // Names of ~70 characters: 100 authors' JSON (~50 KB) or page rows (~150 KB) fit in 256 KB; all do not.
  const authors = Array.from({ length: AUTHORS }, (_, n) => {
    const name = `Author ${String(n).padStart(3, '0')} ${'x'.repeat(60)}`;
    return { remoteId: `${name} <a${n}@example.com>`, remoteName: name, email: `a${n}@example.com`, name };
  });
  const { importId } = await seedImport(owner.login, REPO, { authors });
  ids = (await listAuthors(owner.login, REPO, importId)).map((a) => a.id);
}, 120_000);
afterAll(async () => {
  await stack?.stop();
});

const base = () => `${stack.baseUrl}/repos/${owner.login}/${REPO}/import/authors`;

async function get(search = '') {
  const response = await fetch(`${base()}${search}`, {
    headers: { Authorization: owner.auth, Accept: PREVIEW },
  });
  const text = await response.text();
  return {
    status: response.status,
    bytes: Buffer.byteLength(text),
    link: response.headers.get('link'),
    body: response.status === 200 ? JSON.parse(text) : text,
  };
}

/** The Link header as rel → URL. */
const links = (header: string | null): Record<string, string> =>
  Object.fromEntries(
    (header ?? '')
      .split(', ')
      .filter(Boolean)
      .map((part) => {
        const [, url, rel] = /^<([^>]+)>; rel="(\w+)"$/.exec(part) ?? [];
        return [rel ?? '', url ?? ''];
      }),
  );

describe('GET /repos/:owner/:repo/import/authors: paging', () => {
  it('answers 30 authors by default, in id order, with next and last links, far below the limit', async () => {
    const first = await get();
    expect(first.status).toBe(200);
    expect(first.body).toHaveLength(30);
    const firstIds = first.body.map((a: { id: number }) => a.id);
    expect([...firstIds].sort((a, b) => a - b)).toEqual(firstIds);
    expect(first.body[0].remote_name).toMatch(/^Author 000 /);
    expect(links(first.link)).toEqual({ next: `${base()}?page=2`, last: `${base()}?page=34` });
    expect(first.bytes).toBeLessThan(LIMIT);
  });

  it('gives every page GitHub’s next, last, first and prev links, and the pages together are all authors', async () => {
    const seen: string[] = [];
    let url: string | undefined = `${base()}?per_page=100`;
    let pages = 0;
    while (url) {
      const page = await get(url.slice(base().length));
      expect(page.status).toBe(200);
      expect(page.bytes).toBeLessThan(LIMIT);
      seen.push(...page.body.map((a: { remote_name: string }) => a.remote_name.slice(0, 10)));
      pages++;
      const rel = links(page.link);
      if (pages > 1) {
        expect(rel.first).toBe(`${base()}?per_page=100&page=1`);
        expect(rel.prev).toBe(`${base()}?per_page=100&page=${pages - 1}`);
      }
      if (rel.next) expect(rel.last).toBe(`${base()}?per_page=100&page=10`);
      url = rel.next;
    }
    expect(pages).toBe(10);
    expect(seen).toHaveLength(AUTHORS);
    expect(new Set(seen).size).toBe(AUTHORS);
    expect(seen[AUTHORS - 1]).toBe('Author 999');
    // Past the last page: an empty page that links back.
    const beyond = await get('?per_page=100&page=12');
    expect(beyond.body).toEqual([]);
    expect(links(beyond.link)).toEqual({
      first: `${base()}?per_page=100&page=1`,
      prev: `${base()}?per_page=100&page=10`,
    });
  });

  it('bounds per_page at 100 and falls back to 30 for a malformed or zero per_page, as GitHub', async () => {
    const huge = await get('?per_page=1000');
    expect(huge.status).toBe(200);
    expect(huge.body).toHaveLength(100);
    expect(huge.bytes).toBeLessThan(LIMIT);
    expect(links(huge.link).last).toBe(`${base()}?per_page=100&page=10`);
    for (const odd of ['0', '-5', 'abc', '2.5'])
      expect((await get(`?per_page=${odd}`)).body).toHaveLength(30);
    expect((await get('?per_page=7&page=2')).body.map((a: { id: number }) => a.id)).toEqual(ids.slice(7, 14));
  });

  it('pages the authors after since, and the links keep since', async () => {
    const since = ids[9];
    const page = await get(`?since=${since}&per_page=40&page=2`);
    expect(page.status).toBe(200);
    expect(page.body.map((a: { id: number }) => a.id)).toEqual(ids.slice(50, 90));
    expect(links(page.link)).toEqual({
      next: `${base()}?since=${since}&per_page=40&page=3`,
      last: `${base()}?since=${since}&per_page=40&page=25`,
      first: `${base()}?since=${since}&per_page=40&page=1`,
      prev: `${base()}?since=${since}&per_page=40&page=1`,
    });
    // 990 authors after the 10th: the 25th page of 40 holds the last 30.
    expect((await get(`?since=${since}&per_page=40&page=25`)).body).toHaveLength(30);
    expect((await get('?since=abc')).status).toBe(422);
  });
});

describe('import progress page: paged authors', () => {
  it('shows one page of authors below the limit, with the total and links to the other pages', async () => {
    const browser = new WebClient(stack.webUrl);
    await browser.get('/login');
    expect((await browser.post('/login', { login: owner.login, password: owner.password })).status).toBe(303);
    const path = `/${owner.login}/${REPO}/import`;
    const first = await browser.get(path);
    expect(first.status).toBe(200);
    const html = await first.text();
    expect(Buffer.byteLength(html)).toBeLessThan(LIMIT);
    expect(html).toContain(`Authors (${AUTHORS})`);
    expect(html.match(/<tr id="author-\d+"/g)).toHaveLength(AUTHORS_SHOWN);
    expect(html).toContain(`id="author-${ids[0]}"`);
    expect(html).toContain(`href="${path}?page=2" rel="next"`);
    expect(html).not.toContain('rel="prev"');
    const lastPage = Math.ceil(AUTHORS / AUTHORS_SHOWN);
    const last = await (await browser.get(`${path}?page=${lastPage}`)).text();
    expect(last.match(/<tr id="author-\d+"/g)).toHaveLength(AUTHORS - (lastPage - 1) * AUTHORS_SHOWN);
    expect(last).toContain(`id="author-${ids[AUTHORS - 1]}"`);
    expect(last).toContain(`href="${path}?page=${lastPage - 1}" rel="prev"`);
    expect(last).not.toContain('rel="next"');
  });
});
