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
