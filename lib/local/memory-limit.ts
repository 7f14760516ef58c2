/**
 * A Lambda function's memory size enforced on one execution environment, as this machine allows:
 * a memory cgroup of the environment's own under this process's cgroup, holding the sandbox and
 * everything it starts, limited to the function's `MemorySize` without swap. Over it the kernel's
 * OOM killer kills a process of the environment; `lambda-functions.ts` then ends the environment
 * and reports `Runtime.OutOfMemory`, as Lambda does.
 *
 * - cgroup v2 (`memory.max`, `memory.swap.max`, `memory.events`' `oom_kill`), where the memory
 *   controller is delegated to this process's cgroup;
 * - else cgroup v1's memory controller (`memory.limit_in_bytes`, `memory.memsw.limit_in_bytes`,
 *   `memory.oom_control`'s `oom_kill`);
 * - else nothing is enforced (said once on stderr). `prlimit`'s RLIMIT_AS is no stand-in: Node's V8
 *   reserves far more address space than it uses (its pointer cage alone is 4 GiB), so an address
 *   space limit of 128–3,008 MB stops the runtime from starting, and RLIMIT_DATA counts the same
 *   reservations; and neither counts a process's children together.
 *
 * Unlike Lambda, where `/tmp` is storage apart from memory, the sandbox's `/tmp` is a tmpfs whose
 * pages are charged to the environment's cgroup: a step that fills `/tmp` has that much less memory.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryLimit {
  readonly mechanism: 'cgroup2' | 'cgroup1';
  readonly limitMiB: number;
  /** Writing a process id here moves the process in (its later children are born in). */
  readonly procsFile: string;
  /** How many processes the kernel has killed in it for memory. */
  oomKills(): number;
  /** The most memory it held at once, in bytes, if the kernel tells. */
  peakBytes(): number | undefined;
  /** Removes the cgroup once nothing runs in it (waits up to 5 s for the last to leave). */
  remove(): Promise<void>;
}

interface Place {
  readonly mechanism: MemoryLimit['mechanism'];
  /** This process's cgroup directory, under which each environment gets one. */
  readonly parent: string;
}

const V2_ROOT = '/sys/fs/cgroup';
const V1_ROOT = '/sys/fs/cgroup/memory';
const MiB = 1024 * 1024;

const read = (file: string): string | undefined => {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
};

/** `oom_kill <n>` in a flat-keyed cgroup file. */
const counter = (file: string, key: string): number => {
  const line = (read(file) ?? '').split('\n').find((entry) => entry.startsWith(`${key} `));
  return Number(line?.split(' ')[1] ?? 0);
};

/** Where this process's cgroups are, per hierarchy (`/proc/self/cgroup`). */
function ownCgroups(): { v2?: string; v1memory?: string } {
  const found: { v2?: string; v1memory?: string } = {};
  for (const line of (read('/proc/self/cgroup') ?? '').split('\n')) {
    const [, controllers, path] = line.split(':');
    if (path === undefined) continue;
    if (controllers === '') found.v2 = path;
    else if (controllers?.split(',').includes('memory')) found.v1memory = path;
  }
  return found;
}

/** Whether a cgroup can be made under `parent` with `file` in it (the controller delegated to it). */
function canMake(parent: string, file: string): boolean {
  const probe = join(parent, `lambda-probe-${process.pid}`);
  try {
    mkdirSync(probe);
  } catch {
    return false;
  }
  const usable = existsSync(join(probe, file));
  rmdirSync(probe);
  return usable;
}

function findPlace(): Place | undefined {
  const own = ownCgroups();
  if (
    own.v2 !== undefined &&
    (read(join(V2_ROOT, 'cgroup.controllers')) ?? '').split(/\s/).includes('memory')
  ) {
    const parent = join(V2_ROOT, own.v2);
    if (canMake(parent, 'memory.max')) return { mechanism: 'cgroup2', parent };
  }
  if (own.v1memory !== undefined) {
    const parent = join(V1_ROOT, own.v1memory);
    if (canMake(parent, 'memory.limit_in_bytes')) return { mechanism: 'cgroup1', parent };
  }
  return undefined;
}

let place: Place | undefined | null = null;
let created = 0;

/**
 * A cgroup limited to `mib` MiB for one environment of function `name`; undefined where this
 * machine cannot make one (not root, no memory controller).
 */
export function memoryLimit(name: string, mib: number): MemoryLimit | undefined {
  if (place === null) {
    place = findPlace();
    if (!place)
      console.warn(
        'local Lambda: no memory cgroup can be made here (neither cgroup v2 nor v1 memory controller is delegated): memory sizes are not enforced',
      );
  }
  if (!place) return undefined;
  const { mechanism, parent } = place;
  created += 1;
  const dir = join(parent, `lambda-${process.pid}-${created}-${name.replace(/[^\w-]/g, '_')}`);
  mkdirSync(dir);
  const bytes = String(mib * MiB);
  if (mechanism === 'cgroup2') {
    writeFileSync(join(dir, 'memory.max'), bytes);
    if (existsSync(join(dir, 'memory.swap.max'))) writeFileSync(join(dir, 'memory.swap.max'), '0');
  } else {
    writeFileSync(join(dir, 'memory.limit_in_bytes'), bytes);
    // With swap accounting, memory plus swap too: Lambda has no swap.
    if (existsSync(join(dir, 'memory.memsw.limit_in_bytes')))
      writeFileSync(join(dir, 'memory.memsw.limit_in_bytes'), bytes);
  }
  return {
    mechanism,
    limitMiB: mib,
    procsFile: join(dir, 'cgroup.procs'),
    oomKills: () =>
      mechanism === 'cgroup2'
        ? counter(join(dir, 'memory.events'), 'oom_kill')
        : counter(join(dir, 'memory.oom_control'), 'oom_kill'),
    peakBytes() {
      const text = read(join(dir, mechanism === 'cgroup2' ? 'memory.peak' : 'memory.max_usage_in_bytes'));
      return text === undefined ? undefined : Number(text.trim());
    },
    async remove() {
      // A killed namespace's processes may take a moment to leave it (EBUSY until then).
      for (let attempt = 0; attempt < 50; attempt++) {
        try {
          rmdirSync(dir);
          return;
        } catch {
          await new Promise((resolve) => setTimeout(resolve, 100));
        }
      }
    },
  };
}
