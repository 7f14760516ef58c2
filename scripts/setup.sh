#!/usr/bin/env bash
# The one setup step chained before `npm start` and `npm test`: checks the system commands the
# service and its tests shell out to (installing them with apt-get when run as root), then puts
# DynamoDB Local and its loopback-only launcher under .data/. Idempotent, and fast when everything
# is in place; prints one line on success.
set -euo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly DATA_DIR="$ROOT/.data"
readonly CACHE_DIR="$DATA_DIR/cache"

# DynamoDB Local ships inside this npm package's emulator/ folder. The package itself is never
# installed (its launcher does not work and its dependencies are heavy); only its tarball is fetched.
readonly DDB_PACKAGE='amplify-dynamodb-simulator'
readonly DDB_PACKAGE_VERSION='2.9.30'
readonly DDB_INTEGRITY='sha512-xTeeRLvzEfqyd5lh3bH4c0kHvSHHmmhD5ZDsHFKAQ5g2Zl6JqlFdutaQhCLHzxEp6Ry1o7TB6niIoXuQAnSewQ=='
readonly DDB_DIR="$DATA_DIR/dynamodb-local"
readonly DDB_MARKER="$DDB_DIR/.installed"
readonly LAUNCHER_SOURCE="$ROOT/scripts/java/LoopbackDynamoDbLocal.java"
readonly LAUNCHER_DIR="$DDB_DIR/launcher"
readonly LAUNCHER_CLASS="$LAUNCHER_DIR/LoopbackDynamoDbLocal.class"

readonly MIN_JAVA_MAJOR=17

# The worker image's Debian packages (one a line, `#` comments): the tests run the same tools the
# image ships, so on a Debian host each of them is installed too (scripts/image-root.sh, Dockerfile).
readonly IMAGE_PACKAGES="$ROOT/lib/cdk/worker/packages.txt"

# System commands, each with the Debian (bookworm) package that provides it. Add a pair per new tool.
# An absolute path names a file that must exist (a command outside PATH, or an Apache module).
readonly SYSTEM_COMMANDS=(
  'java:openjdk-17-jre-headless'
  'javac:openjdk-17-jdk-headless'
  'git:git'
  'git-lfs:git-lfs'
  'git-filter-repo:git-filter-repo'
  'hg:mercurial'
  'svn:subversion'
  'svnrdump:subversion'
  'svnadmin:subversion'
  'svnserve:subversion'
  'svn-all-fast-export:svn-all-fast-export'
  '/usr/sbin/apache2:apache2'
  '/usr/lib/apache2/modules/mod_dav_svn.so:libapache2-mod-svn'
  '/usr/lib/git-core/git-svn:git-svn'
  'chromium:chromium'
  'openssl:openssl'
  # GitHub's CLI, driven unmodified by test/e2e/gh-cli.test.ts.
  'gh:gh'
  # The as-deployed tests: the worker image's root file system (scripts/image-root.sh), the init
  # ECS injects into the Git front end's task, and the EFS access point's ownership (a FUSE bind
  # mount that shows and creates every file as the access point's user).
  'mmdebstrap:mmdebstrap'
  'tini:tini'
  'bindfs:bindfs'
  # A real git credential helper on the authorization-code flow with PKCE (its e2e test).
  'git-credential-oauth:git-credential-oauth'
)

fail() {
  printf 'setup: %s\n' "$*" >&2
  exit 1
}

# Prints the Debian packages of the commands in SYSTEM_COMMANDS that are not on PATH, and on a
# Debian host the packages of IMAGE_PACKAGES that are not installed.
missing_packages() {
  local pair command package
  {
    for pair in "${SYSTEM_COMMANDS[@]}"; do
      command="${pair%%:*}"
      package="${pair#*:}"
      if [[ "$command" == /* ]]; then
        [[ -e "$command" ]] || printf '%s\n' "$package"
      else
        command -v "$command" >/dev/null 2>&1 || printf '%s\n' "$package"
      fi
    done
    if command -v dpkg-query >/dev/null 2>&1; then
      for package in $(sed 's/#.*//' "$IMAGE_PACKAGES"); do
        [[ "$(dpkg-query -W -f '${Status}' "$package" 2>/dev/null)" == 'install ok installed' ]] ||
          printf '%s\n' "$package"
      done
    fi
  } | sort -u
}

ensure_system_commands() {
  local packages
  mapfile -t packages < <(missing_packages)
  if ((${#packages[@]} == 0)); then return 0; fi

  if ! command -v apt-get >/dev/null 2>&1; then
    fail "missing system packages (Debian names): ${packages[*]}. Install their equivalents and rerun."
  fi
  if ((EUID != 0)); then
    printf 'setup: missing system packages: %s\n' "${packages[*]}" >&2
    printf 'setup: install them, then rerun:\n  sudo apt-get update && sudo apt-get install -y --no-install-recommends %s\n' \
      "${packages[*]}" >&2
    exit 1
  fi

  printf 'setup: installing %s\n' "${packages[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq
  apt-get install -y -qq --no-install-recommends "${packages[@]}" >/dev/null

  mapfile -t packages < <(missing_packages)
  ((${#packages[@]} == 0)) || fail "still missing after apt-get install: ${packages[*]}"
}

# Major version of `java` or `javac` ("17.0.15" -> 17, legacy "1.8.0_392" -> 8).
java_major() {
  local version
  version="$("$1" -version 2>&1 | grep -Eo '[0-9]+(\.[0-9]+)*' | head -n 1)"
  [[ "$version" == 1.* ]] && version="${version#1.}"
  printf '%s\n' "${version%%.*}"
}

ensure_java_version() {
  local tool major
  for tool in javac java; do
    major="$(java_major "$tool")"
    if [[ -z "$major" ]] || ((major < MIN_JAVA_MAJOR)); then
      fail "$tool $MIN_JAVA_MAJOR or newer is needed, $(command -v "$tool") is version ${major:-unknown}." \
        "Install openjdk-17-jdk-headless and select it with: sudo update-alternatives --config $tool"
    fi
  done
}

# Hex sha512 pinned by DDB_INTEGRITY (npm's "sha512-<base64>"), with coreutils only.
expected_sha512() {
  base64 -d <<<"${DDB_INTEGRITY#sha512-}" | od -An -v -tx1 | tr -d ' \n'
}

sha512_of() {
  sha512sum "$1" | cut -d ' ' -f 1
}

ensure_dynamodb_local() {
  if [[ -f "$DDB_MARKER" && "$(<"$DDB_MARKER")" == "$DDB_PACKAGE@$DDB_PACKAGE_VERSION" ]]; then
    return 0
  fi

  local tarball="$CACHE_DIR/$DDB_PACKAGE-$DDB_PACKAGE_VERSION.tgz" expected
  expected="$(expected_sha512)"
  mkdir -p "$CACHE_DIR"
  if [[ ! -f "$tarball" || "$(sha512_of "$tarball")" != "$expected" ]]; then
    rm -f "$tarball"
    printf 'setup: fetching %s@%s (DynamoDB Local, 57 MB)\n' "$DDB_PACKAGE" "$DDB_PACKAGE_VERSION"
    local log
    log="$(mktemp)"
    if ! (cd "$CACHE_DIR" && npm pack "$DDB_PACKAGE@$DDB_PACKAGE_VERSION" --silent >"$log" 2>&1); then
      cat "$log" >&2
      rm -f "$log"
      fail "npm pack $DDB_PACKAGE@$DDB_PACKAGE_VERSION failed"
    fi
    rm -f "$log"
    [[ -f "$tarball" ]] || fail "npm pack did not produce $tarball"
  fi

  local actual
  actual="$(sha512_of "$tarball")"
  if [[ "$actual" != "$expected" ]]; then
    rm -f "$tarball"
    fail "INTEGRITY MISMATCH for $DDB_PACKAGE@$DDB_PACKAGE_VERSION: expected sha512 $expected" \
      "($DDB_INTEGRITY), got $actual. The tarball was deleted; refusing to install it."
  fi

  # Extract beside the target and swap it in, so an interrupted run never leaves a half tree that
  # looks installed.
  local staging="$DDB_DIR.tmp.$$"
  rm -rf "$DDB_DIR".tmp.*
  mkdir -p "$staging"
  tar -xzf "$tarball" -C "$staging" --strip-components=2 package/emulator/
  [[ -f "$staging/DynamoDBLocal.jar" ]] || fail "no emulator/DynamoDBLocal.jar in $tarball"
  rm -rf "$DDB_DIR"
  mv "$staging" "$DDB_DIR"
  printf '%s\n' "$DDB_PACKAGE@$DDB_PACKAGE_VERSION" >"$DDB_MARKER"
}

ensure_launcher() {
  [[ -f "$LAUNCHER_CLASS" && "$LAUNCHER_CLASS" -nt "$LAUNCHER_SOURCE" ]] && return 0
  rm -rf "$LAUNCHER_DIR"
  mkdir -p "$LAUNCHER_DIR"
  # DynamoDBLocal.jar's manifest Class-Path brings in DynamoDBLocal_lib/ (Jetty). `-path` silences
  # warnings about the native libraries listed there.
  javac --release "$MIN_JAVA_MAJOR" -Xlint:all,-path -Werror \
    -cp "$DDB_DIR/DynamoDBLocal.jar" -d "$LAUNCHER_DIR" "$LAUNCHER_SOURCE"
}

main() {
  ensure_system_commands
  ensure_java_version
  mkdir -p "$DATA_DIR"
  # Serializes concurrent setups (e.g. two terminals running `npm test`) on the shared .data/.
  if command -v flock >/dev/null 2>&1; then
    exec {lock_fd}>"$DATA_DIR/setup.lock"
    flock "$lock_fd"
  fi
  ensure_dynamodb_local
  ensure_launcher
  printf 'setup: ok (DynamoDB Local from %s@%s, java %s)\n' "$DDB_PACKAGE" "$DDB_PACKAGE_VERSION" \
    "$(java_major java)"
}

main "$@"
