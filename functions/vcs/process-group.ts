/**
 * A tool started as the leader of a process group (and session) of its own, so that it can be
 * stopped whole: git runs most of its work in helpers (the `git` wrapper runs `git-http-backend`,
 * which runs `upload-pack`, which runs `pack-objects`; a fetch runs a remote helper and
 * `index-pack`), and stopping only the process node started leaves them running, orphaned.
 *
 * The helpers stopped with it are reparented to PID 1, which must reap them: in the Git front end's
 * task that is the container's init process (`initProcessEnabled`, lib/cdk/git-frontend.ts), not
 * node, which waits only for the processes it started.
 */
import {
  type ChildProcessWithoutNullStreams,
  type SpawnOptionsWithoutStdio,
  spawn,
} from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';

/** How long the group has between SIGTERM and SIGKILL. */
export const TERM_GRACE_MS = 3_000;

export interface ProcessGroup {
  readonly child: ChildProcessWithoutNullStreams;
  /**
   * Ends every process of the group, the leader's helpers too: SIGTERM (git removes its lock files
   * and temporary files on it), then SIGKILL to whatever is left `TERM_GRACE_MS` later. Calls after
   * the first do nothing, and so does a signal once all are gone.
   */
  readonly stop: () => void;
}

export function spawnGroup(
  command: string,
  args: readonly string[],
  options: SpawnOptionsWithoutStdio,
): ProcessGroup {
  const child = spawn(command, [...args], { ...options, detached: true });
  return { child, stop: groupStopper(() => child.pid) };
}

/** Sends `name` to every process of the group `leader` leads (nothing when it is unknown or all gone). */
export function signalGroup(leader: number | undefined, name: NodeJS.Signals): void {
  try {
    if (leader !== undefined) process.kill(-leader, name);
  } catch {
    // all gone
  }
}

/** `ProcessGroup.stop` for the group `leader()` names (read at each signal: it may be known later). */
export function groupStopper(leader: () => number | undefined): () => void {
  let stopped = false;
  return () => {
    if (stopped) return;
    stopped = true;
    signalGroup(leader(), 'SIGTERM');
    // Sent even when the leader has exited: a helper may outlive it. The group's ID cannot name
    // another group while any of its processes is left, and is not reused this soon after.
    setTimeout(() => signalGroup(leader(), 'SIGKILL'), TERM_GRACE_MS).unref();
  };
}

/** Whether any process of the group `leader` leads is left (zombies included: not yet reaped). */
export function groupAlive(leader: number): boolean {
  try {
    process.kill(-leader, 0);
    return true;
  } catch (error) {
    // EPERM: there is one, not ours to signal.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** The PIDs of the processes in the group `leader` leads now, from Linux `/proc` (none elsewhere). */
export async function groupMembers(leader: number): Promise<number[]> {
  const pids = (await readdir('/proc').catch(() => [])).filter((name) => /^\d+$/.test(name));
  const stats = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')));
  // `pid (comm) state ppid pgrp …`: comm may hold spaces and parentheses, so split at the last ')'.
  return stats.flatMap((stat, index) => {
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return stat && Number(fields[2]) === leader ? [Number(pids[index])] : [];
  });
}
