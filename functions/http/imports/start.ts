import * as z from 'zod/mini';
import { MAX_VCS_PASSWORD_LENGTH, MAX_VCS_USERNAME_LENGTH } from '#domain/imports';
import { apiHandler } from '#http/middleware/http-stack';
import { startImport } from '#services/imports';
import { importJson, importUrl } from '../json/import.ts';
import { importChoicesFields, sentChoices } from './choices.ts';

/** Unknown fields are ignored, as on GitHub; known ones must have their type. */
export const body = z.object({
  vcs_url: z.string(),
  vcs: z.optional(z.string().check(z.maxLength(32))),
  vcs_username: z.optional(z.string().check(z.maxLength(MAX_VCS_USERNAME_LENGTH))),
  vcs_password: z.optional(z.string().check(z.maxLength(MAX_VCS_PASSWORD_LENGTH))),
  tfvc_project: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
  ...importChoicesFields,
});

/** PUT /repos/:owner/:repo/import: starts an import into the caller's empty repository. */
export const handler = apiHandler(
  { body: { schema: body, resource: 'Import' } },
  async ({ body, caller, params, urls }) => {
    const record = await startImport(caller, params.owner ?? '', params.repo ?? '', {
      vcsUrl: body.vcs_url,
      vcs: body.vcs,
      vcsUsername: body.vcs_username,
      vcsPassword: body.vcs_password,
      tfvcProject: body.tfvc_project,
      choices: sentChoices(body),
    });
    return { status: 201, body: importJson(record, urls), headers: { Location: importUrl(record, urls) } };
  },
);
