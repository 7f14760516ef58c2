import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import type { RawJob } from '#vcs/origin';

/** The only addresses the adapter tests' origins listen on, and so all a job may reach. */
export const LOOPBACK_ONLY: readonly string[] = ['127.0.0.1'];

/**
 * A factory of raw import jobs for an adapter test: each job for `url` gets a fresh work dir under
 * `root()` (read when the job is made, so a `beforeAll` may set it) and may reach 127.0.0.1 only.
 */
export function rawJobs(root: () => string) {
  let made = 0;
  return async (url: string, extra: Partial<RawJob> = {}): Promise<RawJob> => ({
    url,
    allowedAddresses: LOOPBACK_ONLY,
    workDir: await mkdtemp(join(root(), `job-${++made}-`)),
    ...extra,
  });
}
