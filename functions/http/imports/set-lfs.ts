import * as z from 'zod/mini';
import { type ApiRequest, apiHandler, type Reply } from '#http/middleware/http-stack';
import { setLfsPreference } from '#services/imports';
import { importJson } from '../json/import.ts';

const schema = z.object({ use_lfs: z.enum(['opt_in', 'opt_out']) });

/** What both LFS routes do (the spec's prefix-less path and GitHub's `/repos/…` path). */
export const setLfsSpec = { body: { schema, resource: 'Import' } };
export async function setLfs({
  body,
  caller,
  params,
  urls,
}: ApiRequest<z.infer<typeof schema>>): Promise<Reply> {
  const record = await setLfsPreference(caller, params.owner ?? '', params.repo ?? '', body.use_lfs);
  return { status: 200, body: importJson(record, urls) };
}

/** PATCH /repos/:owner/:repo/import/lfs: `use_lfs` = `opt_in` or `opt_out`. */
export const handler = apiHandler(setLfsSpec, setLfs);
