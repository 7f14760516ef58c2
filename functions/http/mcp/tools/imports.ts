import * as z from 'zod/mini';
import {
  importProgress,
  importReport,
  importRevision,
  setLfsPreference,
  startImport,
  updateImport,
} from '#services/imports';
import { sentChoices } from '../../imports/choices.ts';
import { setLfsSpec } from '../../imports/set-lfs.ts';
import { body as startBody } from '../../imports/start.ts';
import { body as updateBody } from '../../imports/update.ts';
import { importJson, importReportJson, importRevisionJson } from '../../json/import.ts';
import { fullName, POLL_HINT, repositoryFields, tool } from '../tool.ts';

/** An import's JSON in one sentence: its status, the status text and the origin's words if any. */
export function statusSentence(name: string, json: Record<string, unknown>): string {
  const error = typeof json.error_message === 'string' && json.error_message ? ` ${json.error_message}` : '';
  return `The import of ${name} is ${String(json.status)} (${String(json.status_text ?? '')}).${error}`;
}

/** The answer for a tool whose REST route answers with the import. */
const importAnswer = (prefix: string, name: string, json: Record<string, unknown>) => ({
  text: `${prefix}${statusSentence(name, json)}`,
  structured: json,
});

export const startImportTool = tool({
  name: 'start_import',
  title: 'Start an import',
  description: `Starts importing an origin (Git, Subversion, Mercurial or TFVC) into an empty repository of yours (make one with create_repository). As PUT /repos/{owner}/{repo}/import. ${POLL_HINT}`,
  mirrors: 'imports/start',
  input: z.extend(startBody, repositoryFields),
  resource: 'Import',
  readOnly: false,
  run: async (caller, input, urls) => {
    const record = await startImport(caller, input.owner, input.repo, {
      vcsUrl: input.vcs_url,
      vcs: input.vcs,
      vcsUsername: input.vcs_username,
      vcsPassword: input.vcs_password,
      tfvcProject: input.tfvc_project,
      choices: sentChoices(input),
    });
    return importAnswer('Started. ', fullName(input), importJson(record, urls));
  },
});

export const importStatusTool = tool({
  name: 'get_import_status',
  title: "An import's status",
  description:
    "An import's progress: status (detecting, importing, mapping, pushing, complete, or what it waits for: auth_failed, detection_needs_auth, detection_found_multiple, error), the origin's words in error_message, project_choices, and counts. As GET /repos/{owner}/{repo}/import. Poll this tool while an import runs.",
  mirrors: 'imports/get',
  input: z.object(repositoryFields),
  resource: 'Import',
  readOnly: true,
  run: async (caller, input, urls) => {
    const record = await importProgress(caller, input.owner, input.repo);
    return importAnswer('', fullName(input), importJson(record, urls));
  },
});

export const updateImportTool = tool({
  name: 'update_import',
  title: 'Give credentials or a project choice, or restart',
  description: `Answers what an import waits for: vcs_username and vcs_password (auth_failed, detection_needs_auth), or vcs with tfvc_project / human_name from project_choices (detection_found_multiple); with no field, restarts a failed import. As PATCH /repos/{owner}/{repo}/import. ${POLL_HINT}`,
  mirrors: 'imports/update',
  input: z.extend(updateBody, repositoryFields),
  resource: 'Import',
  readOnly: false,
  run: async (caller, input, urls) => {
    const { record, restarted } = await updateImport(caller, input.owner, input.repo, {
      vcsUsername: input.vcs_username,
      vcsPassword: input.vcs_password,
      vcs: input.vcs,
      tfvcProject: input.tfvc_project,
      humanName: input.human_name,
      choices: sentChoices(input),
    });
    return importAnswer(restarted ? 'Restarted. ' : '', fullName(input), importJson(record, urls));
  },
});

export const setLfsTool = tool({
  name: 'set_import_lfs',
  title: 'The large-file choice',
  description: `Whether files over 100 MB go to Git LFS (opt_in) or are left out (opt_out). As PATCH /repos/{owner}/{repo}/import/lfs. ${POLL_HINT}`,
  mirrors: 'imports/set-lfs',
  input: z.extend(setLfsSpec.body.schema, repositoryFields),
  resource: setLfsSpec.body.resource,
  readOnly: false,
  run: async (caller, input, urls) => {
    const record = await setLfsPreference(caller, input.owner, input.repo, input.use_lfs);
    return importAnswer(`use_lfs is ${input.use_lfs}. `, fullName(input), importJson(record, urls));
  },
});

export const importReportTool = tool({
  name: 'get_import_report',
  title: "An import's report",
  description:
    'What the import could not carry over as it was (empty commits, renamed refs, paths Git cannot store, large files, …), each finding with its revision and path. As GET /repos/{owner}/{repo}/import/report.',
  mirrors: 'imports/get-report',
  input: z.object(repositoryFields),
  resource: 'Import',
  readOnly: true,
  run: async (caller, input) => {
    const report = importReportJson(await importReport(caller, input.owner, input.repo));
    return { text: `The report of ${fullName(input)}: ${JSON.stringify(report)}`, structured: report };
  },
});

export const revisionTool = tool({
  name: 'lookup_revision',
  title: 'Look up a revision in the revision map',
  description:
    'The commit an origin revision became (a Subversion revision number, a Mercurial changeset id, a TFVC changeset, or a Git commit id). As GET /repos/{owner}/{repo}/import/revisions/{origin_revision}.',
  mirrors: 'imports/get-revision',
  input: z.object({
    ...repositoryFields,
    origin_revision: z.string().check(z.describe("The origin's own name of the revision.")),
  }),
  resource: 'ImportRevision',
  readOnly: true,
  run: async (caller, input) => {
    const { revision } = await importRevision(caller, input.owner, input.repo, input.origin_revision);
    const entry = importRevisionJson(revision);
    return { text: `${input.origin_revision} → ${JSON.stringify(entry)}`, structured: entry };
  },
});
