/**
 * An import client of the bench stack for the large-history sections: a user and a token, then
 * imports started through the API and waited for, a followed repository synced, refs compared.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import type { LocalStack } from '#local/stack';
import { admin, BENCH_PASSWORD, basicAuth } from './support.ts';

const run = promisify(execFile);

export interface ImportClient {
  /** Creates `repo` and imports `url` into it; the milliseconds from PUT to `complete`. */
  imported(repo: string, url: string, vcs: string): Promise<number>;
  /** Follows `repo` (no schedule). */
  follow(repo: string): Promise<void>;
  /** One sync of `repo`; the milliseconds from POST to `complete`. */
  synced(repo: string): Promise<number>;
  /** `git ls-remote` of the hosted repository: its refs, id for id. */
  refs(repo: string): Promise<string>;
}

export async function importClient(
  stack: LocalStack,
  endpointsFile: string,
  home: string,
): Promise<ImportClient> {
  await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
  const created = await fetch(`${stack.baseUrl}/authorizations`, {
    method: 'POST',
    headers: { Authorization: basicAuth('bench', BENCH_PASSWORD) },
    body: JSON.stringify({ scopes: ['repo'], note: 'large history benchmark' }),
  });
  const { token } = (await created.json()) as { token: string };
  const headers = { Authorization: `token ${token}`, Accept: 'application/vnd.github.barred-rock-preview' };
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.baseUrl}${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await response.text();
    return text === '' ? undefined : (JSON.parse(text) as Record<string, unknown>);
  };
  const complete = async (repo: string) => {
    for (;;) {
      const body = await call('GET', `/repos/bench/${repo}/import`);
      if (body?.status === 'complete') return;
      if (body?.status === 'error') throw new Error(`import of ${repo} failed: ${JSON.stringify(body)}`);
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  };
  return {
    async imported(repo, url, vcs) {
      await call('POST', '/user/repos', { name: repo });
      const started = performance.now();
      await call('PUT', `/repos/bench/${repo}/import`, { vcs_url: url, vcs });
      await complete(repo);
      return performance.now() - started;
    },
    async follow(repo) {
      await call('PUT', `/repos/bench/${repo}/import/sync`, { interval_minutes: null });
    },
    async synced(repo) {
      const started = performance.now();
      await call('POST', `/repos/bench/${repo}/import/sync`);
      await complete(repo);
      return performance.now() - started;
    },
    async refs(repo) {
      const env = { PATH: process.env.PATH, HOME: home, LC_ALL: 'C' };
      return (
        await run('git', ['ls-remote', `${stack.webUrl}/bench/${repo}.git`], { env, maxBuffer: 256 << 20 })
      ).stdout;
    },
  };
}
