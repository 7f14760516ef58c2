/**
 * A cheap fingerprint of what an origin holds, compared with the one taken before the last
 * scheduled sync: equal means nothing new, and the scheduler starts no execution. It goes through
 * the same network guard, credentials and inactivity deadline as the adapters. A check that fails
 * throws: the caller runs the sync, which reports what went wrong.
 *
 * Git: the SHA-256 of the ref advertisement (`git ls-remote`: every ref and the object it names,
 * HEAD's symbolic target included), which changes with any push, new ref, deleted ref or tag.
 * Subversion: the repository's UUID and youngest revision (`subversion/fingerprint.ts`).
 * Mercurial: heads, branch heads and bookmarks (`mercurial/fingerprint.ts`). TFVC: the project's
 * newest changeset (`tfvc/fingerprint.ts`).
 */
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Vcs } from '#domain/imports';
import { type AdapterOptions, adapterSetup } from './adapter-options.ts';
import { checkedUrl, classify, openSession, prepareGitHome } from './git.ts';
import { runGit } from './git-command.ts';
import { mercurialFingerprint } from './mercurial/fingerprint.ts';
import type { OriginAccess, RawJob } from './origin.ts';
import { subversionFingerprint } from './subversion/fingerprint.ts';
import { tfvcFingerprint } from './tfvc/fingerprint.ts';

/** A probe lists refs only: it has a minute, however large the history. */
const FINGERPRINT_TIMEOUT_MS = 60_000;

/** The origin as the import reads it: its URL, credentials, and the project chosen there, if any. */
export type FingerprintAccess = OriginAccess & Pick<RawJob, 'choice'>;

export async function originFingerprint(
  vcs: Vcs,
  access: FingerprintAccess,
  options: AdapterOptions = {},
): Promise<string> {
  if (vcs === 'git') return gitFingerprint(access, options);
  if (vcs === 'subversion') return subversionFingerprint(access, options);
  if (vcs === 'mercurial') return mercurialFingerprint(access, options);
  return tfvcFingerprint(access, options);
}

async function gitFingerprint(access: OriginAccess, options: AdapterOptions): Promise<string> {
  const url = checkedUrl(access).toString();
  const { guardFor, idleTimeoutMs } = adapterSetup(options);
  const scratch = await mkdtemp(join(tmpdir(), 'git-fingerprint-'));
  const home = join(scratch, 'home');
  try {
    await prepareGitHome(home, []);
    const session = await openSession(home, guardFor(access), access, idleTimeoutMs);
    try {
      const refs = await runGit([...session.args, 'ls-remote', '--symref', '--', url], {
        cwd: scratch,
        home,
        transport: 'network',
        timeoutMs: options.checkTimeoutMs ?? FINGERPRINT_TIMEOUT_MS,
        ...session.run,
        maxStdoutBytes: 64 * 1024 * 1024,
      }).catch((error: unknown) => {
        throw classify(error, session, access);
      });
      return `git:${createHash('sha256').update(refs).digest('hex')}`;
    } finally {
      await session.close();
    }
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
