import { gitHandler } from '#http/middleware/git-stack';
import { lfsDownload } from '#services/lfs-api';

/** GET /:owner/:repo.git/info/lfs/objects/:oid: an LFS object's bytes (the local store's href). */
export const handler = gitHandler(async ({ caller, params }) => ({
  status: 200,
  headers: { 'Content-Type': 'application/octet-stream' },
  body: await lfsDownload(caller, params.owner ?? '', params.repo ?? '', params.oid ?? ''),
}));
