import { apiHandler } from '#http/middleware/http-stack';
import { importReport } from '#services/imports';
import { importReportJson } from '../json/import.ts';

/** GET /repos/:owner/:repo/import/report: what the import could not carry over (an extension). */
export const handler = apiHandler({}, async ({ caller, params }) => {
  const report = await importReport(caller, params.owner ?? '', params.repo ?? '');
  return { status: 200, body: importReportJson(report) };
});
