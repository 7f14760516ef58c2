import * as z from 'zod/mini';
import { MAX_VCS_PASSWORD_LENGTH, MAX_VCS_USERNAME_LENGTH } from '#domain/imports';
import { apiHandler } from '#http/middleware/http-stack';
import { updateImport } from '#services/imports';
import { importJson, importUrl } from '../json/import.ts';
import { importChoicesFields, sentChoices } from './choices.ts';

export const body = z.object({
  vcs_username: z.optional(z.string().check(z.maxLength(MAX_VCS_USERNAME_LENGTH))),
  vcs_password: z.optional(z.string().check(z.maxLength(MAX_VCS_PASSWORD_LENGTH))),
  vcs: z.optional(z.string().check(z.maxLength(32))),
  tfvc_project: z.optional(z.string().check(z.maxLength(255))),
  human_name: z.optional(z.string().check(z.maxLength(1024))),
  ...importChoicesFields,
});

/**
 * PATCH /repos/:owner/:repo/import: credentials, a project choice, or an empty body (restart,
 * answered with `Location` as in GitHub's docs), which may carry the owner's choices.
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'Import' } },
  async ({ body, caller, params, urls }) => {
    const { record, restarted } = await updateImport(caller, params.owner ?? '', params.repo ?? '', {
      vcsUsername: body.vcs_username,
      vcsPassword: body.vcs_password,
      vcs: body.vcs,
      tfvcProject: body.tfvc_project,
      humanName: body.human_name,
      choices: sentChoices(body),
    });
    return {
      status: 200,
      body: importJson(record, urls),
      ...(restarted ? { headers: { Location: importUrl(record, urls) } } : {}),
    };
  },
);
