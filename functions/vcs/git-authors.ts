/**
 * The identities in a raw history (every adapter's raw history is a Git repository).
 */
import { gitRemoteId } from '#domain/imports';
import { runGit } from './git-command.ts';
import type { OriginAuthor } from './origin.ts';
import { excludingSeen } from './seen-history.ts';

/**
 * Distinct author and committer identities over every ref, oldest first; with `seenTips`, only of
 * the commits those tips do not reach (`seen-history.ts`). Fields are NUL-separated (`-z` ends each
 * commit with NUL too), so names with tabs, `<` or odd bytes cannot shift them.
 */
export async function gitAuthors(
  repo: string,
  home: string,
  seenTips?: readonly string[],
): Promise<readonly OriginAuthor[]> {
  // A repository without refs lists nothing (`log --all` names no commit: no error).
  const out = await excludingSeen(seenTips, (exclude, input) =>
    runGit(
      [
        '-c',
        'i18n.logOutputEncoding=UTF-8',
        'log',
        '--all',
        ...exclude,
        '--reverse',
        '-z',
        '--format=%an%x00%ae%x00%cn%x00%ce',
      ],
      { cwd: repo, home, transport: 'local', timeoutMs: 600_000, input },
    ),
  );
  const fields = out.toString('utf8').split('\0');
  const seen = new Map<string, OriginAuthor>();
  for (let i = 0; i + 3 < fields.length; i += 4) {
    for (const [name, email] of [
      [fields[i], fields[i + 1]],
      [fields[i + 2], fields[i + 3]],
    ] as const) {
      const remoteId = gitRemoteId(name ?? '', email ?? '');
      if (!seen.has(remoteId))
        seen.set(remoteId, { remoteId, remoteName: name ?? '', name: name ?? '', email: email ?? '' });
    }
  }
  return [...seen.values()];
}
