/**
 * The origin adapters by VCS, and detection over a list of them: Git and Mercurial so far;
 * Subversion and TFVC adapters join the list in a later issue without changing callers.
 */
import type { Vcs } from '#domain/imports';
import { type GitAdapterOptions, gitAdapter } from './git.ts';
import { type MercurialAdapterOptions, mercurialAdapter } from './mercurial.ts';
import { type Detection, type OriginAccess, type OriginAdapter, OriginFailed } from './origin.ts';
import { type TfvcAdapterOptions, tfvcAdapter } from './tfvc.ts';

export type AdapterOptions = GitAdapterOptions & MercurialAdapterOptions & TfvcAdapterOptions;

/** The adapter for an origin type; `OriginFailed` for one this service cannot import yet. */
export function adapterFor(vcs: Vcs, options: AdapterOptions = {}): OriginAdapter {
  if (vcs === 'git') return gitAdapter(options);
  if (vcs === 'mercurial') return mercurialAdapter(options);
  if (vcs === 'tfvc') return tfvcAdapter(options);
  throw new OriginFailed(`Importing from ${vcs} is not supported yet`);
}

/** Every adapter detection tries, in order. */
export const detectionCandidates = (options: AdapterOptions = {}): readonly OriginAdapter[] => [
  gitAdapter(options),
  mercurialAdapter(options),
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
    const detection = await adapter.detect(access);
    if (detection.kind === 'found' || detection.kind === 'multiple') return detection;
    if (detection.kind === 'needs_auth') needsAuth = true;
  }
  return needsAuth ? { kind: 'needs_auth' } : { kind: 'nothing' };
}
