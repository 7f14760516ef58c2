import { apiHandler } from '#http/middleware/http-stack';
import { setLfs, setLfsSpec } from './set-lfs.ts';

/** PATCH /:owner/:repo/import/lfs: the spec's path for the same operation. */
export const handler = apiHandler(setLfsSpec, setLfs);
