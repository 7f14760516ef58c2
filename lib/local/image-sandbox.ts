/**
 * A process started from the worker image's root file system the way Lambda and ECS start the
 * image's container: its own mount and PID namespaces, the root read-only, `/tmp` a small tmpfs,
 * the bundles at `/var/task` read-only, the shared file system at its mount path, a user that is
 * not root (and not the owner of the shared file system's files), only the environment it is
 * given. The network stays this machine's loopback (the origins, DynamoDB Local and the Runtime
 * API stand-in are there).
 *
 * Needs root (namespaces, mounts, `chroot`); CI runs as root.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createWriteStream } from 'node:fs';
import { mkdtemp, readdir, readFile, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface SandboxOptions {
  /** The image's root file system (never written). */
  readonly root: string;
  /** Bound read-only at `/var/task`: the bundles the image's build stage makes. */
  readonly taskDir: string;
  /** The shared file system as the access point presents it, bound read-write at `mountPath`. */
  readonly fileSystem?: { readonly source: string; readonly mountPath: string };
  /** Files bound read-only into the sandbox: sandbox path → host path (new ones under `/run`). */
  readonly files?: Readonly<Record<string, string>>;
  readonly uid: number;
  readonly gid: number;
  /** `/tmp`'s size: Lambda's ephemeral storage. */
  readonly tmpMiB: number;
  /** The whole environment of the process. */
  readonly env: Readonly<Record<string, string>>;
  /** The command, resolved inside the sandbox. */
  readonly argv: readonly string[];
  /** The working directory the command starts in: the image's WORKDIR (`aws-lambda-ric` loads handlers from it). */
  readonly workdir: string;
  /**
   * The init ECS injects when the task definition enables it (`docker-init`, which is tini): bound
   * at `/dev/init` and run as PID 1 with the command as its child. Without it, the command is
   * PID 1 of its namespace, as in a task without `initProcessEnabled`.
   */
  readonly init?: string;
  /** Where the process's stdout and stderr go. */
  readonly logFile: string;
  /**
   * A cgroup's `cgroup.procs` the sandbox enters before anything in it starts, so that everything
   * it runs is held to the cgroup's limits (`memory-limit.ts`).
   */
  readonly cgroupProcs?: string;
}

export interface Sandbox {
  readonly process: ChildProcess;
  /** Resolves with the exit code once the sandbox is gone. */
  readonly exited: Promise<number | null>;
  /**
   * Its `/tmp` as this machine reaches it (`/proc/<pid>/root/tmp` of a process inside), for a test
   * to fill; undefined once nothing runs in it.
   */
  tmpDir(): Promise<string | undefined>;
  /** Kills everything in it. */
  stop(): Promise<void>;
}

/**
 * Runs as root in the new namespaces: builds the view of the file system under a fresh directory,
 * then `chroot`s into it and drops to the user. `CAP_FOWNER` is kept as an ambient capability: an
 * EFS access point performs every operation as its own user, so the owner-only calls (chmod,
 * utime) that the kernel would refuse on a file displayed as another user's succeed there too.
 */
const SETUP = String.raw`
set -euo pipefail
new=$SANDBOX_DIR
mount --bind "$SANDBOX_ROOT" "$new"
mount -o remount,bind,ro "$new"
mount --bind "$SANDBOX_TASK" "$new/var/task"
mount -o remount,bind,ro "$new/var/task"
mount -t tmpfs -o "size=$SANDBOX_TMP_MIB"m,mode=1777 tmpfs "$new/tmp"
mount -t proc proc "$new/proc"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$new/dev"
for device in null zero random urandom full tty; do
  touch "$new/dev/$device"
  mount --bind "/dev/$device" "$new/dev/$device"
done
ln -s /proc/self/fd "$new/dev/fd"
mkdir -p "$new/dev/shm"
mount -t tmpfs -o size=64m,mode=1777 tmpfs "$new/dev/shm"
mount -t tmpfs -o size=1m,mode=755 tmpfs "$new/mnt"
if [ -n "$SANDBOX_FS" ]; then
  mkdir -p "$new$SANDBOX_MOUNT_PATH"
  mount --bind "$SANDBOX_FS" "$new$SANDBOX_MOUNT_PATH"
fi
mount -t tmpfs -o size=1m,mode=755 tmpfs "$new/run"
while IFS='=' read -r inside outside; do
  [ -n "$inside" ] || continue
  [ -e "$new$inside" ] || { mkdir -p "$(dirname "$new$inside")"; touch "$new$inside"; }
  mount --bind -o ro "$outside" "$new$inside"
done <<<"$SANDBOX_FILES"
set -- /usr/bin/env -i -C "$SANDBOX_WORKDIR" "$@"
if [ -n "$SANDBOX_INIT" ]; then
  touch "$new/dev/init"
  mount --bind -o ro "$SANDBOX_INIT" "$new/dev/init"
  set -- /dev/init -- "$@"
fi
mount -o remount,bind,ro "$new/mnt"
exec chroot "$new" /usr/bin/setpriv --reuid="$SANDBOX_UID" --regid="$SANDBOX_GID" --clear-groups \
  --inh-caps=+fowner --ambient-caps=+fowner -- "$@"
`;

export async function startSandbox(options: SandboxOptions): Promise<Sandbox> {
  const dir = await mkdtemp(join(tmpdir(), 'image-sandbox-'));
  const env = Object.entries(options.env).map(([name, value]) => `${name}=${value}`);
  const log = createWriteStream(options.logFile, { flags: 'a' });
  // Into its cgroup first: the shell moves itself in, then becomes `unshare`.
  const enter = options.cgroupProcs
    ? ['-c', 'echo $$ > "$0" && exec "$@"', options.cgroupProcs, 'unshare']
    : [];
  const child = spawn(
    options.cgroupProcs ? 'sh' : 'unshare',
    [
      ...enter,
      '--mount',
      '--pid',
      '--fork',
      '--kill-child',
      '--propagation',
      'private',
      'bash',
      '-c',
      SETUP,
      'sandbox',
      ...env,
      ...options.argv,
    ],
    {
      env: {
        PATH: '/usr/sbin:/usr/bin:/sbin:/bin',
        SANDBOX_DIR: dir,
        SANDBOX_ROOT: options.root,
        SANDBOX_TASK: options.taskDir,
        SANDBOX_TMP_MIB: String(options.tmpMiB),
        SANDBOX_FS: options.fileSystem?.source ?? '',
        SANDBOX_MOUNT_PATH: options.fileSystem?.mountPath ?? '',
        SANDBOX_FILES: Object.entries(options.files ?? {})
          .map(([inside, outside]) => `${inside}=${outside}`)
          .join('\n'),
        SANDBOX_INIT: options.init ?? '',
        SANDBOX_WORKDIR: options.workdir,
        SANDBOX_UID: String(options.uid),
        SANDBOX_GID: String(options.gid),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  child.stdout.pipe(log, { end: false });
  child.stderr.pipe(log, { end: false });
  const exited = new Promise<number | null>((resolve) => {
    child.once('close', (code) => {
      log.end();
      void rm(dir, { recursive: true, force: true }).catch(() => undefined);
      resolve(code);
    });
  });
  let stopping: Promise<void> | undefined;
  return {
    process: child,
    exited,
    async tmpDir() {
      for (const pid of await descendants(child.pid ?? 0)) {
        // Past the chroot: its root is the view SETUP built, not this machine's.
        if ((await readlink(`/proc/${pid}/root`).catch(() => '/')) !== '/') return `/proc/${pid}/root/tmp`;
      }
      return undefined;
    },
    stop() {
      // Once: a second caller (a timed-out environment, then the suite's teardown) waits for the first.
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) {
          // The namespace's PID 1 first: its end kills everything in the namespace. `--kill-child`
          // alone does not reach it, since changing the user clears the parent-death signal.
          const children = await readFile(`/proc/${child.pid}/task/${child.pid}/children`, 'utf8').catch(
            () => '',
          );
          for (const pid of children.split(' ').filter(Boolean)) {
            try {
              process.kill(Number(pid), 'SIGKILL');
            } catch {
              // It ended meanwhile (ESRCH): nothing left to kill.
            }
          }
          child.kill('SIGKILL');
        }
        await exited;
      })();
      return stopping;
    },
  };
}

/** Every process below `pid`, through the kernel's children lists (of every thread). */
export async function descendants(pid: number): Promise<number[]> {
  const found: number[] = [];
  const queue = [pid];
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    const threads = await readdir(`/proc/${next}/task`).catch(() => [] as string[]);
    const lists = await Promise.all(
      threads.map((thread) => readFile(`/proc/${next}/task/${thread}/children`, 'utf8').catch(() => '')),
    );
    for (const child of lists.join(' ').split(' ').filter(Boolean).map(Number)) {
      found.push(child);
      queue.push(child);
    }
  }
  return found;
}
