/**
 * Peak memory and disk of a benchmark's work, sampled: the resident memory of this process and
 * every process it started (the in-process worker and its tools), summed, once a second; the disk
 * of the directories named, once every few seconds (`du -sk`). Linux only (`/proc`).
 */
import { execFile } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';

const run = promisify(execFile);

interface Proc {
  readonly pid: number;
  readonly ppid: number;
  readonly pgrp: number;
  readonly name: string;
  readonly rssBytes: number;
}

const PAGE = 4096;

/** Every process on the machine, as `/proc/<pid>/stat` tells (a process gone meanwhile is left out). */
export async function processes(): Promise<Proc[]> {
  const found: Proc[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = await readFile(`/proc/${entry}/stat`, 'utf8').catch(() => undefined);
    if (stat === undefined) continue;
    const close = stat.lastIndexOf(')');
    const name = stat.slice(stat.indexOf('(') + 1, close);
    const fields = stat.slice(close + 2).split(' ');
    found.push({
      pid: Number(entry),
      ppid: Number(fields[1]),
      pgrp: Number(fields[2]),
      name,
      rssBytes: Number(fields[21]) * PAGE,
    });
  }
  return found;
}

/** The processes below `root` (not itself). */
export function descendants(all: readonly Proc[], root: number): Proc[] {
  const children = new Map<number, Proc[]>();
  for (const proc of all) children.set(proc.ppid, [...(children.get(proc.ppid) ?? []), proc]);
  const below: Proc[] = [];
  const queue = [root];
  while (queue.length > 0) {
    for (const child of children.get(queue.shift() ?? 0) ?? []) {
      below.push(child);
      queue.push(child.pid);
    }
  }
  return below;
}

export interface Sampler {
  /**
   * Stops sampling: the peak resident memory (bytes) and the peak disk (bytes) seen, beyond what
   * the directories held when sampling started.
   */
  stop(): Promise<{ peakRssBytes: number; peakDiskBytes: number }>;
}

/**
 * Samples from now on. `skip` names processes left out of the sum (DynamoDB Local's `java`, which
 * stands in for a managed service).
 */
export function sample(dirs: readonly string[], skip: readonly string[] = ['java']): Sampler {
  let peakRssBytes = 0;
  let peakDiskBytes = 0;
  let running = true;
  const before = diskBytes(dirs);
  const memory = (async () => {
    while (running) {
      const all = await processes();
      const self = all.find((proc) => proc.pid === process.pid);
      const rss = [...(self ? [self] : []), ...descendants(all, process.pid)]
        .filter((proc) => !skip.includes(proc.name))
        .reduce((sum, proc) => sum + proc.rssBytes, 0);
      peakRssBytes = Math.max(peakRssBytes, rss);
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  })();
  const disk = (async () => {
    while (running) {
      peakDiskBytes = Math.max(peakDiskBytes, await diskBytes(dirs));
      await new Promise((resolve) => setTimeout(resolve, 5000));
    }
  })();
  return {
    async stop() {
      running = false;
      await Promise.all([memory, disk]);
      peakDiskBytes = Math.max(peakDiskBytes, await diskBytes(dirs));
      return { peakRssBytes, peakDiskBytes: Math.max(0, peakDiskBytes - (await before)) };
    },
  };
}

/** What the directories hold on disk (`du -sk`), bytes; 0 for one that does not exist. */
export async function diskBytes(dirs: readonly string[]): Promise<number> {
  let total = 0;
  for (const dir of dirs) {
    const out = await run('du', ['-sk', dir]).then(
      (result) => result.stdout,
      (error: { stdout?: string }) => error.stdout ?? '0',
    );
    total += Number(out.split('\t')[0] ?? 0) * 1024;
  }
  return total;
}
