/**
 * Whether the origin lost changesets the local clone holds (history rewritten there: `hg strip`,
 * then perhaps new changesets). A repository holds every ancestor of what it holds, so the origin
 * has all of raw.hg exactly when it knows every branch head raw.hg had when last converted
 * (`HgState.heads`). Node asks it with the wire protocol's `known`, batched (one request for up to
 * `NODES_PER_REQUEST` heads), through the guard, with no hg process. An origin that does not
 * answer that is asked by `hg outgoing` instead (Mercurial's own discovery, through the same guard
 * as the pull), whose failures read as the pull's.
 */
import { type Guard, guardedRequest, startGuardProxy } from '#vcs/network-guard';
import { ForbiddenAddress, type RawJob } from '#vcs/origin';
import { HgFailed, runHg } from './command.ts';
import { pullFailure } from './pull.ts';
import { basicAuth, contentType, HG_TYPE, USER_AGENT } from './wire.ts';

export interface RewriteCheck {
  readonly job: RawJob;
  /** The repository pulled (the job's URL, or the chosen repository of an hgweb index). */
  readonly url: string;
  readonly home: string;
  readonly hgRepo: string;
  readonly guard: Guard;
  readonly inactivityMs: number;
  readonly timeoutMs: number;
  /** raw.hg's branch heads; absent when not recorded. */
  readonly heads?: readonly string[] | undefined;
}

/**
 * Heads per `known` command, and commands per request: a request line of about 7 KB, under the
 * 8 KB many front ends allow (one that refuses it sends the check to `hg outgoing`).
 */
const NODES_PER_COMMAND = 40;
const COMMANDS_PER_REQUEST = 4;

/** True when some changeset of `hgRepo` is not at the origin. */
export async function originDropped(check: RewriteCheck): Promise<boolean> {
  if (check.heads !== undefined) {
    const known = await originKnows(check, check.heads);
    if (known !== null) return !known;
  }
  return outgoing(check);
}

/** Whether the origin knows every one of `nodes`; null when it would not say. */
async function originKnows(check: RewriteCheck, nodes: readonly string[]): Promise<boolean | null> {
  const base = check.url.replace(/\?.*$/, '');
  const headers = { 'user-agent': USER_AGENT, accept: HG_TYPE, ...basicAuth(check.job) };
  const commands: string[][] = [];
  for (let i = 0; i < nodes.length; i += NODES_PER_COMMAND)
    commands.push(nodes.slice(i, i + NODES_PER_COMMAND) as string[]);
  try {
    for (let i = 0; i < commands.length; i += COMMANDS_PER_REQUEST) {
      const group = commands.slice(i, i + COMMANDS_PER_REQUEST);
      const cmds = encodeURIComponent(group.map((part) => `known nodes=${part.join(' ')}`).join(';'));
      // No redirect: one may lead off the origin, which hg will not follow either.
      const answer = await guardedRequest(`${base}?cmd=batch&cmds=${cmds}`, check.guard, {
        headers,
        timeoutMs: check.timeoutMs,
        maxBytes: 64 * 1024,
        maxRedirects: 0,
      });
      const parts = answer.body.toString('latin1').split(';');
      if (
        answer.status !== 200 ||
        contentType(answer.headers) !== HG_TYPE ||
        parts.length !== group.length ||
        !parts.every((part, index) => new RegExp(`^[01]{${group[index]?.length ?? 0}}$`).test(part))
      )
        return null;
      if (parts.some((part) => part.includes('0'))) return false;
    }
    return true;
  } catch (error) {
    if (error instanceof ForbiddenAddress) throw error;
    return null;
  }
}

/** `hg outgoing`: exits 1 when there is nothing outgoing (an abort is 255). */
async function outgoing(check: RewriteCheck): Promise<boolean> {
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
    if (error instanceof HgFailed && error.exitCode === 1 && !error.timedOut) return false;
    throw pullFailure(error, proxy, job, url, inactivityMs);
  } finally {
    await proxy.close();
  }
}
