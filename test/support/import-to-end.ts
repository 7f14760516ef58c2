import { importApiCall } from './import-api.ts';

/**
 * Creates the repository `name` for the token's user (`owner`), starts its import with `body`
 * and polls the import until it ends (`complete` or `error`) or `timeoutMs` runs out; returns the
 * import as last seen. Each answer of the way must be the expected one.
 */
export async function importToTheEnd(
  baseUrl: string,
  token: string,
  { owner, name, body, timeoutMs }: { owner: string; name: string; body: unknown; timeoutMs: number },
): Promise<Record<string, unknown>> {
  const created = await fetch(`${baseUrl}/user/repos`, {
    method: 'POST',
    headers: { Authorization: `token ${token}` },
    body: JSON.stringify({ name }),
  });
  if (created.status !== 201) throw new Error(`repository ${name} not created: ${created.status}`);
  const path = `/repos/${owner}/${name}/import`;
  const started = await importApiCall(baseUrl, token, 'PUT', path, body);
  if (started.status !== 201) throw new Error(`import not started: ${JSON.stringify(started.body)}`);
  const deadline = Date.now() + timeoutMs;
  let last: Record<string, unknown> = {};
  while (Date.now() < deadline) {
    last = (await importApiCall(baseUrl, token, 'GET', path)).body;
    if (last.status === 'error' || last.status === 'complete') break;
    await new Promise((resolve) => setTimeout(resolve, 300));
  }
  return last;
}
