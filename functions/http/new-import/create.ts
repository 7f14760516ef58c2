import type { NewImportField, NewImportInput } from '#domain/new-import';
import { paths } from '#http/import-page/paths';
import { startNewImport } from '#services/new-import';
import { HttpError } from '#shared/errors';
import { newImportHandler } from './new-import.ts';
import { type FormProblems, newImportPage } from './views.ts';

const FIELDS: readonly string[] = [
  'vcs_url',
  'vcs_username',
  'vcs_password',
  'name',
] satisfies NewImportField[];

const optional = (value: string | null): string | undefined =>
  value === null || value === '' ? undefined : value;

function inputOf(form: URLSearchParams): NewImportInput {
  return {
    vcsUrl: (form.get('vcs_url') ?? '').trim(),
    vcsUsername: optional(form.get('vcs_username')),
    vcsPassword: optional(form.get('vcs_password')),
    name: (form.get('name') ?? '').trim(),
    private: form.get('visibility') === 'private',
  };
}

/** Refusals the form shows again, with the values, instead of an error page. */
const SHOWN_STATUSES = new Set([409, 422, 503]);

function problemsOf(error: HttpError): FormProblems {
  const fields: Partial<Record<NewImportField, string>> = {};
  const rest: string[] = [];
  for (const field of error.details.errors ?? []) {
    const message = field.message ?? `${field.field} is not valid.`;
    if (FIELDS.includes(field.field) && fields[field.field as NewImportField] === undefined)
      fields[field.field as NewImportField] = message;
    else rest.push(message);
  }
  if ((error.details.errors ?? []).length === 0) rest.push(error.message);
  return rest.length > 0 ? { fields, general: rest.join(' ') } : { fields };
}

/**
 * POST /new/import: makes the repository, starts its import and goes to its progress page (303).
 * A refusal shows the form again with the values (never the password), each problem beside its
 * field, with the refusal's status (422 for the fields).
 */
export const handler = newImportHandler(async (request, user) => {
  const input = inputOf(request.form);
  try {
    const { repository } = await startNewImport(user, input);
    return { location: paths.page({ owner: repository.ownerLogin, repo: repository.name }), status: 303 };
  } catch (error) {
    if (!(error instanceof HttpError && SHOWN_STATUSES.has(error.status))) throw error;
    return newImportPage(request, {
      status: error.status,
      values: {
        vcsUrl: input.vcsUrl,
        vcsUsername: input.vcsUsername ?? '',
        name: input.name,
        private: input.private,
      },
      problems: problemsOf(error),
    });
  }
});
