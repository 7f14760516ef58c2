import * as z from 'zod/mini';
import { MAX_BATCH_ENTRIES } from '#domain/import-batches';
import { isSyncInterval, MAX_SYNC_INTERVAL_MINUTES, MIN_SYNC_INTERVAL_MINUTES } from '#domain/import-sync';
import { MAX_VCS_PASSWORD_LENGTH, MAX_VCS_USERNAME_LENGTH } from '#domain/imports';
import type { NewBatchInput } from '#services/import-batches';
import { notFound, validationFailed } from '#shared/errors';
import { importChoicesFields, sentChoices } from '../imports/choices.ts';

/** Lists are checked against `MAX_BATCH_ENTRIES` by the service (with its message); this only bounds parsing. */
const MAX_LISTED = MAX_BATCH_ENTRIES * 5;
const repository = z.optional(z.string().check(z.maxLength(255)));
const project = z.union([
  z.string().check(z.maxLength(255)),
  z.object({ name: z.string().check(z.maxLength(255)), repository }),
]);

export const intervalField = z.nullable(
  z
    .number()
    .check(
      z.refine(
        isSyncInterval,
        `interval_minutes must be a whole number from ${MIN_SYNC_INTERVAL_MINUTES} to ${MAX_SYNC_INTERVAL_MINUTES}, or null (on demand only)`,
      ),
    ),
);

/** `POST /user/import-batches`: one of `vcs_url` + `projects`, `imports`, or `from_import`; shared options. */
export const createBody = z.object({
  vcs_url: z.optional(z.string()),
  vcs: z.optional(z.string().check(z.maxLength(32))),
  projects: z.optional(z.array(project).check(z.maxLength(MAX_LISTED))),
  imports: z.optional(
    z
      .array(
        z.object({
          vcs_url: z.string(),
          vcs: z.optional(z.string().check(z.maxLength(32))),
          tfvc_project: z.optional(z.string().check(z.minLength(1), z.maxLength(255))),
          repository,
        }),
      )
      .check(z.maxLength(MAX_LISTED)),
  ),
  from_import: z.optional(z.string().check(z.maxLength(200))),
  vcs_username: z.optional(z.string().check(z.maxLength(MAX_VCS_USERNAME_LENGTH))),
  vcs_password: z.optional(z.string().check(z.maxLength(MAX_VCS_PASSWORD_LENGTH))),
  use_lfs: z.optional(z.enum(['opt_in', 'opt_out'])),
  private: z.optional(z.boolean()),
  follow: z.optional(z.object({ interval_minutes: intervalField })),
  concurrency: z.optional(
    z
      .number()
      .check(z.refine((n) => Number.isInteger(n) && n >= 1, 'concurrency must be a positive whole number')),
  ),
  ...importChoicesFields,
});

type CreateBody = z.infer<typeof createBody>;

const named = (entry: z.infer<typeof project>) =>
  typeof entry === 'string' ? { name: entry } : { name: entry.name, repository: entry.repository };

const oneSource = () =>
  validationFailed([
    {
      resource: 'ImportBatch',
      field: 'imports',
      code: 'invalid',
      message: 'send exactly one of vcs_url with projects, imports, or from_import',
    },
  ]);

/** The service's input from the request body (which form it is, and the shared options). */
export function batchInput(body: CreateBody): NewBatchInput {
  const forms = [body.vcs_url !== undefined, body.imports !== undefined, body.from_import !== undefined];
  if (forms.filter(Boolean).length !== 1) throw oneSource();
  let source: NewBatchInput['source'];
  if (body.imports !== undefined) {
    if (body.projects !== undefined) throw oneSource();
    source = {
      kind: 'origins',
      origins: body.imports.map((origin) => ({
        vcsUrl: origin.vcs_url,
        vcs: origin.vcs,
        tfvcProject: origin.tfvc_project,
        repository: origin.repository,
      })),
    };
  } else if (body.from_import !== undefined) {
    const [owner, repo, ...rest] = body.from_import.split('/');
    if (!owner || !repo || rest.length > 0) throw notFound();
    source = { kind: 'from-import', owner, repo, projects: body.projects?.map(named) };
  } else {
    if (body.projects === undefined || body.vcs === undefined)
      throw validationFailed([
        {
          resource: 'ImportBatch',
          field: body.vcs === undefined ? 'vcs' : 'projects',
          code: 'missing_field',
        },
      ]);
    source = {
      kind: 'projects',
      vcsUrl: body.vcs_url ?? '',
      vcs: body.vcs,
      projects: body.projects.map(named),
    };
  }
  return {
    source,
    vcsUsername: body.vcs_username,
    vcsPassword: body.vcs_password,
    useLfs: body.use_lfs,
    choices: sentChoices(body),
    private: body.private,
    follow: body.follow ? { intervalMinutes: body.follow.interval_minutes } : undefined,
    concurrency: body.concurrency,
  };
}

/** The `{batch_id}` of a path (the route table's rule checked it is an id). */
export const batchIdOf = (params: Readonly<Record<string, string>>): number => Number(params.batch_id);
