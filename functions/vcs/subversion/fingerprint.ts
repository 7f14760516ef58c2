/**
 * The cheap "anything new?" check of a Subversion origin before a scheduled sync
 * (`#vcs/origin-fingerprint`): `svn info` of the repository, through the same guard proxy, private
 * config, credentials and idle limit as the import's own calls (`transport.ts`, `command.ts`).
 *
 * The repository's UUID and youngest revision: every commit (to any path, a branch or a tag made,
 * moved or deleted, all being commits in Subversion) raises the youngest revision, and a repository
 * replaced by another (a reload, `svnadmin setuuid`) changes the UUID. A revision property edited
 * afterwards (`svn propset --revprop svn:log`) changes neither: it is seen by the next sync that
 * runs for another reason.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type AdapterOptions, adapterSetup } from '../adapter-options.ts';
import { prepareHome } from '../git-command.ts';
import type { OriginAccess } from '../origin.ts';
import { runSvn } from './command.ts';
import { classify } from './errors.ts';
import { originInfo } from './mirror.ts';
import { openTransport } from './transport.ts';
import { checkedUrl } from './url.ts';

/** The probe asks one question: it has a minute, however large the history. */
const FINGERPRINT_TIMEOUT_MS = 60_000;

export async function subversionFingerprint(access: OriginAccess, options: AdapterOptions): Promise<string> {
  // The repository's URL, not a chosen project below it: UUID and youngest revision are the
  // repository's either way.
  const url = checkedUrl(access.url, access);
  const { guardFor, idleTimeoutMs } = adapterSetup(options);
  const home = await mkdtemp(join(tmpdir(), 'svn-fingerprint-'));
  try {
    await prepareHome(home, []);
    const transport = await openTransport(url, guardFor(access), { idleTimeoutMs, extraCa: undefined });
    try {
      const origin = await originInfo(transport.url, (args) =>
        runSvn('svn', args, {
          cwd: home,
          home,
          credentials: access.credentials,
          proxyPort: transport.proxyPort,
          trustedCertificate: transport.trustedCertificate,
          idleSeconds: idleTimeoutMs / 1000,
          timeoutMs: options.checkTimeoutMs ?? FINGERPRINT_TIMEOUT_MS,
          maxStdoutBytes: 1024 * 1024,
        }),
      );
      return `subversion:${origin.uuid}@${origin.youngest}`;
    } catch (error) {
      throw classify(error, transport, { ...access, workDir: home }, url);
    } finally {
      await transport.close();
    }
  } finally {
    await rm(home, { recursive: true, force: true });
  }
}
