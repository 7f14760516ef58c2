import { gitHandler } from '#http/middleware/git-stack';
import { lfsUpload } from '#services/lfs-api';

/** PUT /:owner/:repo.git/info/lfs/objects/:oid: stores a verified LFS object (the local store's href). */
export const handler = gitHandler(async ({ caller, params, body, query }) => {
  await lfsUpload(caller, params.owner ?? '', params.repo ?? '', params.oid ?? '', body, query.size);
  return { status: 200 };
});
