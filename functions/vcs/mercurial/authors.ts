/**
 * The authors of a converted Mercurial history, and the Git identity the conversion gives a
 * Mercurial user string (`export-program.ts` computes the same in Python).
 */
import { gitRemoteId } from '#domain/imports';
import { gitAuthors } from '#vcs/git-authors';
import type { OriginAuthor } from '#vcs/origin';
import { runHg } from './command.ts';

/**
 * The Git identities in raw.git are what the rewrite step looks up, so they are the remote ids;
 * `remoteName` is the Mercurial user string they came from. A user without `<email>` was already
 * given a made-up valid email by the conversion (`hgUserIdentity`, so nothing is rewritten for
 * it); an email that is still not valid (`Ada <ada>`) gets one here, and the rewrite applies it.
 */
export async function mercurialAuthors(
  gitRepo: string,
  hgRepo: string,
  home: string,
  url: string,
): Promise<readonly OriginAuthor[]> {
  const users = (
    await runHg(['log', '-R', hgRepo, '-r', 'all()', '-T', '{user}\\0'], {
      cwd: home,
      home,
      timeoutMs: 600_000,
    })
  )
    .toString('utf8')
    .split('\0')
    .filter((user) => user !== '');
  const domain = emailDomain(url);
  const byIdentity = new Map<string, string>();
  for (const user of users) {
    const { name, email } = hgUserIdentity(user, domain);
    const identity = gitRemoteId(name, email);
    if (!byIdentity.has(identity)) byIdentity.set(identity, user);
  }
  return (await gitAuthors(gitRepo, home)).map((author) => ({
    remoteId: author.remoteId,
    remoteName: byIdentity.get(author.remoteId) ?? author.name,
    name: author.name,
    email: VALID_EMAIL.test(author.email) ? author.email : `${emailLocalPart(author.name)}@${domain}`,
  }));
}

const VALID_EMAIL = /^[^\s<>@]+@[^\s<>@]+$/;

/** The domain of made-up emails: the origin's host name, or `mercurial.invalid` for an address. */
export function emailDomain(url: string): string {
  const host = new URL(url).hostname;
  return /[a-z]/i.test(host) && !host.includes(':') && !host.startsWith('[') ? host : 'mercurial.invalid';
}

/** `Ada Lovelace` → `ada-lovelace` (ASCII letters lower-cased, every other run of characters one `-`). */
export const emailLocalPart = (name: string): string =>
  name
    .replace(/[A-Z]/g, (letter) => letter.toLowerCase())
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^-+|-+$/g, '') || 'user';

/** The identity of a changeset whose user has neither a name nor an email (as for Subversion). */
const NO_AUTHOR_NAME = '(no author)';
const noAuthorEmail = (domain: string) => `no-author@${domain}`;

/**
 * The Git identity of a Mercurial user string, exactly as the conversion program writes it:
 * `Name <email>` keeps both (without `<`, `>` and line breaks); anything else is a name that gets
 * `<local part>@<domain>`; a user with neither (empty, `<>`) is `(no author) <no-author@<domain>>`.
 */
export function hgUserIdentity(user: string, domain: string): { name: string; email: string } {
  const clean = (text: string) => text.replace(/[<>\n]/g, '').trim();
  const match = /^(.*?)\s*<([^>]*)>\s*$/s.exec(user);
  const name = clean(match ? (match[1] ?? '') : user);
  const email = match ? clean(match[2] ?? '') : name === '' ? '' : `${emailLocalPart(name)}@${domain}`;
  return name === '' && email === ''
    ? { name: NO_AUTHOR_NAME, email: noAuthorEmail(domain) }
    : { name, email };
}
