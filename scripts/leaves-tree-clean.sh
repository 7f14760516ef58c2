#!/usr/bin/env bash
# Runs a command (the test suite) and fails if it left anything new in the working tree that git
# sees: a test writes only under a temporary directory or an ignored folder (.data/, cdk.out/).
# Compared with the state before, so a checkout with changes of its own can still run the suite.
# Outside a git work tree (an unpacked tarball) the command just runs.
set -euo pipefail

status() { git status --porcelain=v1 --untracked-files=all 2>/dev/null | LC_ALL=C sort || true; }

before="$(status)"
"$@"
after="$(status)"

left="$(LC_ALL=C comm -13 <(printf '%s\n' "$before") <(printf '%s\n' "$after") | sed '/^$/d')"
if [ -n "$left" ]; then
  echo "The run left these in the working tree (write under a temporary directory instead):" >&2
  printf '%s\n' "$left" >&2
  exit 1
fi
