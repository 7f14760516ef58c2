/**
 * The tools of an import step (git, hg, svn and their helpers) are started by a small Node process
 * of the worker's own, the launcher, rather than by the worker itself. Starting a process forks the
 * process that starts it, and a fork copies its page tables: measured with Node 20 and 22, about
 * 1 ms for a 50 MB process, 9 ms at 250 MB and 27 ms at 550 MB, all of it with the caller's event
 * loop stalled. The worker grows (the SDK, the handlers; the local stack holds every function in
 * one process); the launcher stays at about 45 MB, so a tool starts in about 1 ms and the worker
 * never waits for the fork. A sync starts some fifteen tools.
 *
 * The launcher starts the tool as the leader of a process group of its own (`process-group.ts`),
 * writes its input and its secret (`BoundedRun.secret`, on descriptor 3) and closes them, and
 * hands the worker the tool's stdout and stderr pipes themselves (IPC with the descriptors: the
 * output is never copied through the launcher), then its exit. The worker stops a tool's group
 * itself, by its process id, as it stops one it started. One launcher serves every step of a
 * worker process; it is started with the first tool, and ends with the worker (its IPC channel
 * closes). A launcher that dies fails the tools it was running, and the next tool starts a new one.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { EventEmitter } from 'node:events';
import type { Socket } from 'node:net';
import { PassThrough } from 'node:stream';
import { groupStopper, signalGroup } from './process-group.ts';

/** The descriptor a tool's secret arrives on (`BoundedRun.secret`). */
export const SECRET_FD = 3;

/**
 * The launcher. It stops the tool's pipes reading before anything is read (`readStop`, in the tick
 * of the spawn), so that the worker receives them with every byte still in them.
 */
const LAUNCHER_PROGRAM = `// the tool launcher (functions/vcs/launcher.ts)
const { spawn } = require('node:child_process');
const failed = (id, error) => process.send({ id, error: { message: String(error.message), code: error.code } });
process.on('message', (m) => {
  let child;
  try {
    child = spawn(m.command, m.args, {
      cwd: m.cwd,
      env: m.env,
      detached: true,
      stdio: ['pipe', 'pipe', 'pipe', ...(m.secret === undefined ? [] : ['pipe'])],
    });
  } catch (error) {
    failed(m.id, error);
    return;
  }
  child.on('error', (error) => failed(m.id, error));
  if (child.pid === undefined) return;
  child.stdout._handle.readStop();
  child.stderr._handle.readStop();
  child.stdin.on('error', () => undefined);
  child.stdin.end(m.input);
  if (m.secret !== undefined) {
    child.stdio[${SECRET_FD}].on('error', () => undefined);
    child.stdio[${SECRET_FD}].end(m.secret);
  }
  process.send({ id: m.id, pid: child.pid, stream: 'stdout' }, child.stdout);
  process.send({ id: m.id, stream: 'stderr' }, child.stderr);
  child.on('exit', (code, signal) => process.send({ id: m.id, exit: { code, signal } }));
});
process.on('disconnect', () => process.exit(0));
`;

export interface LaunchOptions {
  readonly cwd: string;
  /** The tool's whole environment. */
  readonly env: NodeJS.ProcessEnv;
  /** Written to its stdin, which is then closed. */
  readonly input?: string | Buffer | undefined;
  /** Written to descriptor 3, which is then closed (none: no descriptor 3). */
  readonly secret?: string | undefined;
}

/**
 * A tool as a started `ChildProcess` shows it: its output, `error` (it did not start, or its
 * launcher ended) and `close` (its exit code, once it has exited and its output has been read).
 */
export interface LaunchedTool extends EventEmitter {
  readonly stdout: PassThrough;
  readonly stderr: PassThrough;
}

interface Running {
  readonly tool: LaunchedTool;
  /** The launcher that started it. */
  readonly launcher: ChildProcess;
  pid?: number;
  stopAsked: boolean;
  exit?: number | null;
  open: number;
}

interface LauncherMessage {
  readonly id: number;
  readonly pid?: number;
  readonly stream?: 'stdout' | 'stderr';
  readonly exit?: { readonly code: number | null; readonly signal: string | null };
  readonly error?: { readonly message: string; readonly code?: string };
}

let launcher: ChildProcess | undefined;
const running = new Map<number, Running>();
let nextId = 0;

/** Starts `command args` through the launcher; `stop` ends its whole process group as `spawnGroup`'s does. */
export function launchGroup(
  command: string,
  args: readonly string[],
  options: LaunchOptions,
): { readonly child: LaunchedTool; readonly stop: () => void } {
  const id = nextId++;
  const tool = Object.assign(new EventEmitter(), { stdout: new PassThrough(), stderr: new PassThrough() });
  const run: Running = { tool, launcher: launcherProcess(), stopAsked: false, open: 2 };
  running.set(id, run);
  run.launcher.channel?.ref();
  run.launcher.send({
    id,
    command,
    args: [...args],
    cwd: options.cwd,
    env: options.env,
    input: options.input ?? '',
    ...(options.secret === undefined ? {} : { secret: options.secret }),
  });
  // A stop before the launcher named the process is sent once it does (`received`).
  const stopGroup = groupStopper(() => run.pid);
  const stop = () => {
    run.stopAsked = true;
    stopGroup();
  };
  return { child: tool, stop };
}

function launcherProcess(): ChildProcess {
  if (launcher?.connected) return launcher;
  const started = spawn(process.execPath, ['-e', LAUNCHER_PROGRAM], {
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Inputs are bytes (structured clone keeps them so; JSON would not).
    serialization: 'advanced',
    env: {},
  });
  started.unref();
  started.on('message', (message: LauncherMessage, handle?: Socket) => received(message, handle));
  const gone = () => {
    if (launcher === started) launcher = undefined;
    for (const [id, run] of running) {
      if (run.launcher !== started) continue;
      running.delete(id);
      signalGroup(run.pid, 'SIGKILL');
      run.tool.emit('error', new Error('the tool launcher ended'));
    }
  };
  started.on('exit', gone);
  started.on('error', gone);
  launcher = started;
  return started;
}

function received(message: LauncherMessage, handle: Socket | undefined): void {
  const run = running.get(message.id);
  if (!run) {
    handle?.destroy();
    return;
  }
  if (message.error) {
    finish(message.id);
    run.tool.emit('error', Object.assign(new Error(message.error.message), { code: message.error.code }));
    return;
  }
  if (message.pid !== undefined) {
    run.pid = message.pid;
    if (run.stopAsked) signalGroup(run.pid, 'SIGTERM');
  }
  if (message.stream) {
    const into = run.tool[message.stream];
    into.on('end', () => {
      run.open -= 1;
      closed(message.id, run);
    });
    if (handle) handle.pipe(into);
    else into.end();
  }
  if (message.exit) {
    run.exit = message.exit.code;
    closed(message.id, run);
  }
}

/** `close` once the tool has exited and both its pipes have ended, as a `ChildProcess` emits it. */
function closed(id: number, run: Running): void {
  if (run.exit === undefined || run.open > 0) return;
  finish(id);
  run.tool.emit('close', run.exit);
}

function finish(id: number): void {
  running.delete(id);
  if (running.size === 0) launcher?.channel?.unref();
}
