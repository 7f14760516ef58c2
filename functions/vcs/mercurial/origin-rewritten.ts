/**
 * Whether the origin lost changesets the local clone holds (history rewritten there: `hg strip`,
 * then perhaps new changesets). `hg outgoing` answers it with Mercurial's own discovery (a few
 * `heads`/`known` requests over the wire protocol, not a transfer), through the same guard as the
 * pull.
 */
import { type Guard, startGuardProxy } from '#vcs/network-guard';
import type { RawJob } from '#vcs/origin';
import { HgFailed, runHg } from './command.ts';
import { pullFailure } from './pull.ts';

export interface RewriteCheck {
  readonly job: RawJob;
  /** The repository pulled (the job's URL, or the chosen repository of an hgweb index). */
  readonly url: string;
  readonly home: string;
  readonly hgRepo: string;
  readonly guard: Guard;
  readonly inactivityMs: number;
  readonly timeoutMs: number;
}

/** True when some changeset of `hgRepo` is not at the origin. */
export async function originDropped(check: RewriteCheck): Promise<boolean> {
  const { job, url, home, hgRepo, inactivityMs } = check;
  const proxy = await startGuardProxy(check.guard);
  try {
    const network = { origin: url, proxyPort: proxy.port, inactivityMs, credentials: job.credentials };
    const out = await runHg(['outgoing', '-q', '-R', hgRepo, '-T', '{node}\\n', '--', url], {
      cwd: home,
      home,
      network,
      timeoutMs: check.timeoutMs,
    });
    return out.toString('utf8').trim() !== '';
  } catch (error) {
    // `hg outgoing` exits 1 when there is nothing outgoing (an abort is 255).
    if (error instanceof HgFailed && error.exitCode === 1 && !error.timedOut) return false;
    throw pullFailure(error, proxy, job, url, inactivityMs);
  } finally {
    await proxy.close();
  }
}
