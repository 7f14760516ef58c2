/**
 * The cheap "anything new?" check of a TFVC project before a scheduled sync
 * (`#vcs/origin-fingerprint`): the project located as the import locates it (`locate`), then its
 * newest changeset (`$top=1` of the listing, which is newest first), through the same network
 * guard, credentials and request time limit as the adapter (`api-client.ts`).
 *
 * Changesets are numbered in order and never reused, so a new changeset changes the newest id; its
 * date, author and comment are in the fingerprint too, so the newest changeset destroyed and
 * another made in its place, or its comment edited, is seen as well. Labels, shelvesets and branch
 * relations are not imported as history (the report lists them): a label alone starts no sync.
 */
import { createHash } from 'node:crypto';
import { type AdapterOptions, adapterSetup } from '#vcs/adapter-options';
import { type OriginAccess, OriginFailed, type RawJob } from '#vcs/origin';
import { apiClient, apiUrl, call, listOf } from './api-client.ts';
import { listedOf } from './changesets.ts';
import { checkedUrl, locate } from './detect.ts';

export async function tfvcFingerprint(
  access: OriginAccess & Pick<RawJob, 'choice'>,
  options: AdapterOptions,
): Promise<string> {
  const { guardFor, idleTimeoutMs } = adapterSetup(options);
  const api = apiClient(access, guardFor(access), idleTimeoutMs);
  const { collection, project } = await locate(checkedUrl(access.url, access), access, api);
  const step = `Reading the newest changeset of $/${project}`;
  const page = listOf(
    await call(
      api,
      apiUrl(`${collection}/${encodeURIComponent(project)}`, '_apis/tfvc/changesets', {
        'searchCriteria.itemPath': `$/${project}`,
        $top: 1,
      }),
      access,
      step,
    ),
  );
  if (page === undefined)
    throw new OriginFailed(`${step} failed: the origin sent a list the importer cannot read`);
  const first = page[0];
  const newest = first === undefined ? null : (listedOf(first) ?? null);
  if (first !== undefined && newest === null)
    throw new OriginFailed(`${step} failed: the origin sent a changeset without an id`);
  const described = JSON.stringify({ collection, project, newest });
  return `tfvc:${createHash('sha256').update(described).digest('hex')}`;
}
