/** The origin adapters by VCS (Git, Mercurial, Subversion, TFVC), and detection over a list of them. */
import type { Vcs } from '#domain/imports';
import { checkOriginUrl } from '#domain/origin-url';
import { type GitAdapterOptions, gitAdapter } from './git.ts';
import { type MercurialAdapterOptions, mercurialAdapter } from './mercurial.ts';
import type { Detection, OriginAccess, OriginAdapter } from './origin.ts';
import { type SubversionAdapterOptions, subversionAdapter } from './subversion.ts';
import { type TfvcAdapterOptions, tfvcAdapter } from './tfvc/adapter.ts';

export type AdapterOptions = GitAdapterOptions &
  MercurialAdapterOptions &
  SubversionAdapterOptions &
  TfvcAdapterOptions;

/** The adapter for an origin type. */
export function adapterFor(vcs: Vcs, options: AdapterOptions = {}): OriginAdapter {
  if (vcs === 'git') return gitAdapter(options);
  if (vcs === 'mercurial') return mercurialAdapter(options);
  if (vcs === 'subversion') return subversionAdapter(options);
  return tfvcAdapter(options);
}

/** Every adapter detection tries, in order. */
export const detectionCandidates = (options: AdapterOptions = {}): readonly OriginAdapter[] => [
  gitAdapter(options),
  mercurialAdapter(options),
  subversionAdapter(options),
  // Last: it answers only the TFVC API's JSON, and a plain 401 elsewhere only as needs_auth.
  tfvcAdapter(options),
];

/**
 * Tries each adapter's `detect` in order: the first that finds something (one VCS, or several
 * projects to choose from) wins; otherwise `needs_auth` if any adapter saw the origin ask for
 * credentials, else `nothing`. A forbidden address or another `OriginFailed` stops detection.
 */
export async function detectOrigin(
  access: OriginAccess,
  candidates: readonly OriginAdapter[],
): Promise<Detection> {
  let needsAuth = false;
  for (const adapter of candidates) {
    // A URL scheme this VCS never uses (`svn://` for Git) is not a failure, just not this VCS.
    const check = checkOriginUrl(access.url, adapter.vcs, access.allowedAddresses);
    if (!check.ok && check.problem === 'scheme') continue;
    const detection = await adapter.detect(access);
    if (detection.kind === 'found' || detection.kind === 'multiple') return detection;
    if (detection.kind === 'needs_auth') needsAuth = true;
  }
  return needsAuth ? { kind: 'needs_auth' } : { kind: 'nothing' };
}
