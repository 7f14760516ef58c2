import { gitHandler, LFS_MEDIA_TYPE } from '#http/middleware/git-stack';
import { lfsBatch } from '#services/lfs-api';

/** POST /:owner/:repo.git/info/lfs/objects/batch: the Git LFS batch API (basic transfer). */
export const handler = gitHandler(async ({ caller, params, body, urls, header }) => {
  const reply = await lfsBatch(caller, params.owner ?? '', params.repo ?? '', body, {
    webUrl: urls.auth,
    authorization: header('authorization'),
  });
  return { status: 200, headers: { 'Content-Type': LFS_MEDIA_TYPE }, body: JSON.stringify(reply) };
});
