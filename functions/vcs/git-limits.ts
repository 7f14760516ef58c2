/**
 * What one `git http-backend` may cost the Git front end (docs/decisions.md, "Git front end
 * limits"): the git configuration that bounds a serve's memory and a push's size, and the
 * pre-receive hook that refuses a push adding a file over GitHub's file size limit.
 */
import { chmod, mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/**
 * Memory per serve, measured in docs/decisions.md. Objects over `core.bigFileThreshold` are
 * streamed, never held whole, and never delta-searched (git's default, 512 MiB, kept a 100 MiB blob
 * in memory twice over: once whole, once as its delta index); `pack.windowMemory` bounds what the
 * delta search holds of the rest; one thread per serve, as the task has one vCPU;
 * `core.deltaBaseCacheLimit` bounds the cache of inflated delta bases (96 MiB by default). Packs
 * are read through windows of 16 MiB, at most 64 MiB of them mapped at once (git's defaults, 1 GiB
 * and 8 GiB, let one clone of a large repository map all of it).
 */
export const SERVE_MEMORY_CONFIG: readonly (readonly [string, string])[] = [
  ['core.bigFileThreshold', '16m'],
  ['pack.windowMemory', '64m'],
  ['pack.threads', '1'],
  ['core.deltaBaseCacheLimit', '16m'],
  ['core.packedGitWindowSize', '16m'],
  ['core.packedGitLimit', '64m'],
];

/** The limits a push is held to (configuration: `LARGE_FILE_BYTES`, `GIT_MAX_PUSH_BYTES`). */
export interface PushLimits {
  /** A blob larger than this refuses the whole push. */
  readonly maxFileBytes: number;
  /** The largest pack a push may send (`receive.maxInputSize`). */
  readonly maxPushBytes: number;
  /** The vendor's name as its messages spell it (`GitHub`). */
  readonly vendorTitle: string;
}

/**
 * Lists the blobs the push adds (reachable from its new tips, not from any ref there was) with
 * their sizes, and refuses the push with GitHub's messages when one is over the limit. It runs in
 * receive-pack's quarantine: a refusal updates no ref, and git discards the pushed objects. A
 * step that fails fails the push (a line `cat-file` reports missing, or an unknown type).
 */
const PRE_RECEIVE = `#!/bin/sh
tips() {
  while read -r old new ref; do
    case $new in *[!0]*) echo "$new" ;; esac
  done
}
{
  { tips | git rev-list --objects --stdin --not --all || echo 'rev-list-failed'; } |
    git cat-file --batch-check='%(objecttype) %(objectsize) %(rest)' || echo 'cat-file-failed'
} | awk -v limit="$GIT_FRONTEND_MAX_FILE_BYTES" -v vendor="$GIT_FRONTEND_VENDOR" '
  function mb(bytes) { return sprintf("%.2f MB", bytes / 1048576) }
  $1 == "blob" && $2 + 0 > limit + 0 {
    path = $0; sub(/^[^ ]+ [^ ]+ ?/, "", path)
    large[++n] = "File " path " is " mb($2) "; this exceeds " vendor "\\047s file size limit of " mb(limit)
    next
  }
  $1 != "blob" && $1 != "tree" && $1 != "commit" && $1 != "tag" { failed = 1 }
  END {
    if (failed) { print "error: the pushed objects could not be checked" > "/dev/stderr"; exit 1 }
    if (n == 0) exit 0
    print "error: See https://gh.io/lfs for more information." > "/dev/stderr"
    for (i = 1; i <= n; i++) print "error: " large[i] > "/dev/stderr"
    print "error: GH001: Large files detected. You may want to try Git Large File Storage - https://git-lfs.github.com." > "/dev/stderr"
    exit 1
  }'
`;

let hooks: Promise<string> | undefined;
/** A hooks directory holding only the pre-receive hook, made once per process. */
export function pushHooksPath(): Promise<string> {
  hooks ??= (async () => {
    const path = await mkdtemp(join(tmpdir(), 'git-hooks-'));
    await writeFile(join(path, 'pre-receive'), PRE_RECEIVE);
    await chmod(join(path, 'pre-receive'), 0o755);
    return path;
  })();
  return hooks;
}

/** Git configuration for a push held to `limits`, and the environment its hook reads. */
export async function pushLimitsSettings(limits: PushLimits): Promise<{
  readonly config: readonly (readonly [string, string])[];
  readonly env: Readonly<Record<string, string>>;
}> {
  return {
    config: [
      ['core.hooksPath', await pushHooksPath()],
      ['receive.maxInputSize', String(limits.maxPushBytes)],
      // A push is kept as the pack it came as, never exploded into loose objects: git maps a
      // loose object whole to serve it, a pack through the windows above.
      ['receive.unpackLimit', '1'],
    ],
    env: {
      GIT_FRONTEND_MAX_FILE_BYTES: String(limits.maxFileBytes),
      GIT_FRONTEND_VENDOR: limits.vendorTitle,
    },
  };
}
