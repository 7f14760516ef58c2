import { apiHandler } from '#http/middleware/http-stack';
import { listLargeFiles } from './list-large-files.ts';

/** GET /:owner/:repo/import/large_files: the spec's path for the same operation. */
export const handler = apiHandler({}, listLargeFiles);
