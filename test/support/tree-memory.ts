import { readFile } from 'node:fs/promises';
import { descendantsOf, processTable } from './process-tree.ts';

/**
 * The memory of a process tree as Linux `/proc/<pid>/smaps_rollup` shows it, summed over the root
 * and its descendants. `pss` counts each page once however many of the processes map it (git maps
 * packs and loose objects; concurrent clones of one repository share those pages): the tree's
 * memory, near what a container running it is charged. `anon` is the part no page cache can give
 * back under pressure; `rss` counts a shared page once per process, so overstates the tree.
 */
export interface TreeMemory {
  readonly pss: number;
  readonly anon: number;
  readonly rss: number;
  readonly processes: number;
}

const NONE: TreeMemory = { pss: 0, anon: 0, rss: 0, processes: 0 };

async function memoryOf(pid: number): Promise<TreeMemory> {
  const rollup = await readFile(`/proc/${pid}/smaps_rollup`, 'utf8').catch(() => undefined);
  if (rollup === undefined) return NONE;
  const kib = (field: string) =>
    Number(new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(rollup)?.[1] ?? 0) * 1024;
  return { pss: kib('Pss'), anon: kib('Anonymous'), rss: kib('Rss'), processes: 1 };
}

/** The tree's memory now. */
export async function treeMemory(root: number): Promise<TreeMemory> {
  const pids = [root, ...descendantsOf(await processTable(), root).map((entry) => entry.pid)];
  return (await Promise.all(pids.map(memoryOf))).reduce((sum, one) => ({
    pss: sum.pss + one.pss,
    anon: sum.anon + one.anon,
    rss: sum.rss + one.rss,
    processes: sum.processes + one.processes,
  }));
}

/**
 * The tree's peaks while `action` runs, sampled every `intervalMs`: the largest of each sum seen
 * (each at its own moment) and the most processes at once.
 */
export async function peakTreeMemoryDuring(
  root: number,
  action: () => Promise<unknown>,
  intervalMs = 50,
): Promise<TreeMemory> {
  let peak = NONE;
  let running = true;
  const sampling = (async () => {
    while (running) {
      const now = await treeMemory(root);
      peak = {
        pss: Math.max(peak.pss, now.pss),
        anon: Math.max(peak.anon, now.anon),
        rss: Math.max(peak.rss, now.rss),
        processes: Math.max(peak.processes, now.processes),
      };
      await new Promise((resolve) => setTimeout(resolve, intervalMs));
    }
  })();
  try {
    await action();
  } finally {
    running = false;
    await sampling;
  }
  return peak;
}
