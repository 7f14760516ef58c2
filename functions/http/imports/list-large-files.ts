import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { importLargeFiles } from '#services/imports';
import { largeFileJson } from '../json/import.ts';

/** What both large-file routes do (the spec's prefix-less path and GitHub's `/repos/…` path). */
export async function listLargeFiles({ caller, params }: ApiRequest<unknown>): Promise<Reply> {
  const { files } = await importLargeFiles(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: files.map(largeFileJson) };
}

/** GET /repos/:owner/:repo/import/large_files. */
export const handler = apiHandler({}, listLargeFiles);
