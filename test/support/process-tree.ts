import { readdir, readFile } from 'node:fs/promises';

/**
 * The machine's processes as Linux `/proc/<pid>/stat` shows them, for tests that check what a
 * process tree leaves behind: zombies (state `Z`) included, since they hold a PID until reaped.
 */
export interface ProcessEntry {
  readonly pid: number;
  /** The executable's name, at most 15 characters (`git-http-backen`). */
  readonly comm: string;
  /** `R`, `S`, `D`, `Z` (defunct: exited, not yet reaped), … */
  readonly state: string;
  readonly ppid: number;
  /** The process group. */
  readonly pgrp: number;
  /** With the PID, tells a process from a later one that reuses its number. */
  readonly identity: string;
}

/** Every process now, by PID (one that exits while it is read is left out). */
export async function processTable(): Promise<Map<number, ProcessEntry>> {
  const pids = (await readdir('/proc')).filter((name) => /^\d+$/.test(name));
  const entries = await Promise.all(pids.map((pid) => readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '')));
  const table = new Map<number, ProcessEntry>();
  for (const stat of entries) {
    // `pid (comm) state ppid pgrp …`; comm may hold spaces and parentheses, so split at the last ')'.
    const close = stat.lastIndexOf(')');
    if (close < 0) continue;
    const pid = Number(stat.slice(0, stat.indexOf(' ')));
    const fields = stat.slice(close + 2).split(' ');
    // Field 22 of stat (index 19 after comm): the start time, in clock ticks after boot.
    table.set(pid, {
      pid,
      comm: stat.slice(stat.indexOf('(') + 1, close),
      state: fields[0] ?? '',
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      identity: `${pid}@${fields[19]}`,
    });
  }
  return table;
}

/** The processes below `root` (not `root` itself), following parent PIDs. */
export function descendantsOf(table: ReadonlyMap<number, ProcessEntry>, root: number): ProcessEntry[] {
  return [...table.values()].filter((entry) => {
    for (let parent = entry.ppid, hops = 0; parent > 1 && hops < 64; hops++) {
      if (parent === root) return true;
      parent = table.get(parent)?.ppid ?? 0;
    }
    return false;
  });
}

/** A process's command line, or '' once it has gone (a zombie's is empty too). */
export const commandLine = (pid: number): Promise<string> =>
  readFile(`/proc/${pid}/cmdline`, 'utf8').then(
    (text) => text.replaceAll('\0', ' ').trim(),
    () => '',
  );

export const describeProcess = (entry: ProcessEntry): string =>
  `[${entry.comm}] pid ${entry.pid} state ${entry.state} ppid ${entry.ppid} pgrp ${entry.pgrp}`;
