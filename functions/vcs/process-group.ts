/**
 * A tool started as the leader of a process group (and session) of its own, so that it can be
 * stopped whole: git runs most of its work in helpers (the `git` wrapper runs `git-http-backend`,
 * which runs `upload-pack`, which runs `pack-objects`; a fetch runs a remote helper and
 * `index-pack`), and killing only the process node started leaves them running, orphaned.
 *
 * The helpers killed with it are reparented to PID 1, which must reap them: in the Git front end's
 * task that is the container's init process (`initProcessEnabled`, lib/cdk/git-frontend.ts), not
 * node, which waits only for the processes it started.
 */
import {
  type ChildProcessWithoutNullStreams,
  type SpawnOptionsWithoutStdio,
  spawn,
} from 'node:child_process';

export interface ProcessGroup {
  readonly child: ChildProcessWithoutNullStreams;
  /** SIGKILL to every process of the group, the leader's helpers too; nothing once all are gone. */
  readonly kill: () => void;
}

export function spawnGroup(
  command: string,
  args: readonly string[],
  options: SpawnOptionsWithoutStdio,
): ProcessGroup {
  const child = spawn(command, [...args], { ...options, detached: true });
  const kill = () => {
    try {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  return { child, kill };
}
