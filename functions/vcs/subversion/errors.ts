/**
 * What a failed Subversion step tells the user: the guard's refusal first, then svn's error codes
 * mapped to a few plain cases; never a credential or a local path.
 */
import { GitFailed } from '../git-command.ts';
import { OriginAuthFailed, OriginFailed, type RawJob } from '../origin.ts';
import { SvnFailed } from './command.ts';
import { guardRefusal, idleFailure, publicLine, type Transport } from './transport.ts';

export const isAuthError = (text: string) =>
  /E170001|E215004|Authentication error|Authorization failed|Password incorrect|Username not found/i.test(
    text,
  ) ||
  (/E170013/.test(text) && /\b401\b/.test(text));

/**
 * A failed step, as the user may read it: the guard's refusal first, then svn's error codes mapped
 * to a few plain cases; never a credential (runSvn already removed the password).
 */
export function classify(error: unknown, transport: Transport, job: RawJob, url: URL): Error {
  const refused = guardRefusal(transport);
  if (refused) return refused;
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  if (error instanceof GitFailed) return new OriginFailed('Converting the Subversion history failed');
  if (!(error instanceof SvnFailed)) return new OriginFailed('The import failed unexpectedly');
  if (error.tool === 'svn-all-fast-export' || error.tool === 'svnadmin' || error.tool === 'svnlook')
    return new OriginFailed('Converting the Subversion history failed');
  if (error.timedOut) return new OriginFailed('The origin timed out');
  const text = error.stderr;
  if (isAuthError(text))
    return new OriginAuthFailed(
      job.credentials === undefined
        ? 'The origin requires a username and password'
        : 'The origin refused the username and password',
    );
  const shown = new URL(url.toString());
  shown.username = '';
  shown.password = '';
  if (transport.refusals.some((entry) => entry.reason === 'unreachable'))
    return new OriginFailed(`The origin ${url.host} could not be reached`);
  // E210005 svnserve: no repository; E000002 mod_dav_svn: no such filesystem; E175003 not DAV;
  // E170000 / W170000 / E200009: the path does not exist in the repository.
  if (
    /E210005|E000002|E175003|[EW]170000|E200009|E160013|No repository found|non-existent|\b404\b/.test(text)
  )
    return new OriginFailed(`No Subversion repository was found at ${shown.toString()}`);
  // svn's http-timeout: as the guard's idle limit.
  if (/E000110|E670008|timed out|timeout/i.test(text)) return idleFailure(transport);
  // Connection refused, reset, timed out, host or network unreachable, name not resolved, closed.
  if (/E000111|E000104|E000110|E000113|E000101|E670002|E670008|E210002|E120108|E175012/.test(text))
    return new OriginFailed(`The origin ${url.host} could not be reached`);
  let line =
    text
      .split('\n')
      .map((entry) => entry.trim())
      .filter((entry) => /^svn\w*: E\d+/.test(entry))
      .at(-1) ?? 'svn failed';
  if (job.credentials) line = line.split(job.credentials.password).join('***');
  return new OriginFailed(`Reading from the origin failed: ${publicLine(line, job.workDir).slice(0, 300)}`);
}

/**
 * What a tool said about its failure, fit to show: its error lines (`svnrdump: E210002: …`,
 * `fatal: …`, svn-all-fast-export's own complaints), the last few of them, with no credential and
 * nothing of this machine's disk; the last line it printed when none looks like an error.
 */
export function toolWords(stderr: string, job: Pick<RawJob, 'workDir' | 'credentials'>): string {
  const lines = stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !/^\(aborted\)$|^Waiting \d+ seconds/.test(line));
  const errors = lines.filter((line) =>
    /^(svn\w*|svn-all-fast-export): |^(fatal|error): |\bE\d{6}\b|^(Error|Failed|ERROR)\b/i.test(line),
  );
  let words = (errors.length > 0 ? errors.slice(-3) : lines.slice(-1)).join(' ');
  if (job.credentials?.password) words = words.split(job.credentials.password).join('***');
  words = publicLine(words, job.workDir);
  return words.length > 500 ? `${words.slice(0, 497)}...` : words;
}

/**
 * svnrdump failed while sending revision `revision`: the guard's refusal or the credentials
 * problem as always, otherwise the step, the revision and the origin's own words.
 */
export function fetchFailure(
  error: unknown,
  transport: Transport,
  job: RawJob,
  url: URL,
  revision: number,
): Error {
  const classified = classify(error, transport, job, url);
  if (classified instanceof OriginAuthFailed || guardRefusal(transport) !== undefined) return classified;
  if (!(error instanceof SvnFailed)) return classified;
  const words = toolWords(error.stderr, job) || classified.message;
  return new OriginFailed(`Fetching revision ${revision} from the origin failed: ${words}`);
}

/** A local step (loading the mirror, converting it) failed: which step, where, and the tool's words. */
export function localFailure(
  error: unknown,
  step: 'Fetching' | 'Converting',
  job: Pick<RawJob, 'workDir' | 'credentials'>,
  where: { revision?: number | undefined; path?: string | undefined } = {},
): Error {
  if (error instanceof OriginFailed || error instanceof OriginAuthFailed) return error;
  const place = [
    where.revision !== undefined ? ` at revision ${where.revision}` : '',
    where.path !== undefined ? ` (${where.path})` : '',
  ].join('');
  const what = `${step} the Subversion history failed${place}`;
  if (error instanceof SvnFailed || error instanceof GitFailed) {
    const tool = error instanceof SvnFailed ? error.tool : 'git';
    if (error.timedOut) return new OriginFailed(`${what}: ${tool} took too long`);
    const words = toolWords(error.stderr, job);
    return new OriginFailed(
      words === '' ? `${what} (${tool} exited with ${error.exitCode})` : `${what}: ${words}`,
    );
  }
  return new OriginFailed(what);
}
