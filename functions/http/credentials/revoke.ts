import * as z from 'zod/mini';
import { MAX_REPORTED_CREDENTIALS } from '#domain/credential-reports';
import { apiHandler } from '#http/middleware/http-stack';
import { revokeReportedCredentials } from '#services/credential-reports';
import { HttpError } from '#shared/errors';

const body = z.object({
  credentials: z
    .array(z.string())
    .check(
      z.maxLength(
        MAX_REPORTED_CREDENTIALS,
        `At most ${MAX_REPORTED_CREDENTIALS} credentials may be sent at once.`,
      ),
    ),
});

/** GitHub: "Any authenticated requests will return a 403." A report is anonymous by design. */
const authenticatedReport = (): HttpError =>
  new HttpError(403, 'Credentials cannot be revoked with an authenticated request.');

/**
 * POST /credentials/revoke: 202 whatever was reported, so the answer says nothing about which
 * tokens exist; the valid ones are revoked and their owners told (see services/credential-reports.ts).
 */
export const handler = apiHandler(
  { body: { schema: body, resource: 'Credential' } },
  async ({ body, caller, event }) => {
    if (caller.kind !== 'anonymous') throw authenticatedReport();
    await revokeReportedCredentials(body.credentials, event.requestContext?.identity?.sourceIp ?? 'unknown');
    return { status: 202, body: {} };
  },
);
