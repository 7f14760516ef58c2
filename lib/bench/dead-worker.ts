/**
 * A dead worker in the middle of an import, as close as one process gets to it: the in-process
 * local stack runs each step in this process, so a step's death is the death of what it started.
 * The wrapper around the raw-history step kills the whole process group of the first `tool` the
 * step runs once it has worked `afterMs`, waits for the handler to give up (here its own catch
 * blocks still run; a real death runs none of them), and fails the task as Lambda reports a killed
 * runtime: `Runtime.ExitError`. The ASL then retries it, if it says so (`withDeathRetries`).
 */
import { readFile, readlink, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { importStateMachine } from '#local/import-workflow';
import type { LocalTask } from '#local/step-functions/definition';
import { descendants, processes } from './process-sampler.ts';
import { startBenchStack } from './support.ts';

export interface Death {
  /** The tool whose process group dies (its process name, as `/proc/<pid>/stat` gives it). */
  readonly tool: string;
  /** How long the tool runs before it dies. */
  readonly afterMs: number;
  /** Only a tool working below this directory (the import work directory, not an origin's). */
  readonly within: () => string;
}

const cwdOf = (pid: number) => readlink(`/proc/${pid}/cwd`).catch(() => '');

export interface DeathRecord {
  killed: boolean;
  /** When, in the raw step's invocations (1: the first). */
  invocation?: number;
  pgrp?: number;
}

/** The task `task` with one death, as `death` says, in the first of its invocations that runs the tool. */
export function dyingOnce(task: LocalTask, death: Death, record: DeathRecord): LocalTask {
  let invocations = 0;
  return async (input) => {
    invocations += 1;
    if (record.killed) return task(input);
    const work = task(input);
    let settled = false;
    const outcome = work.then(
      () => undefined,
      () => undefined,
    );
    void outcome.then(() => {
      settled = true;
    });
    let seenAt: number | undefined;
    while (!settled) {
      let tool: Awaited<ReturnType<typeof processes>>[number] | undefined;
      for (const proc of descendants(await processes(), process.pid))
        if (proc.name === death.tool && (await cwdOf(proc.pid)).startsWith(death.within())) tool ??= proc;
      if (tool !== undefined) seenAt ??= Date.now();
      if (tool !== undefined && seenAt !== undefined && Date.now() - seenAt >= death.afterMs) {
        try {
          process.kill(-tool.pgrp, 'SIGKILL');
        } catch {
          process.kill(tool.pid, 'SIGKILL');
        }
        Object.assign(record, { killed: true, invocation: invocations, pgrp: tool.pgrp });
        await outcome;
        const error = new Error('RequestId: local Error: Runtime exited with error: signal: killed');
        error.name = 'Runtime.ExitError';
        throw error;
      }
      await Promise.race([outcome, new Promise((resolve) => setTimeout(resolve, 200))]);
    }
    return work;
  };
}

/**
 * The ASL file with `Runtime.ExitError` among the retried errors of every Task that does not name
 * it yet (written to `dir`); whether it had to be added is returned with the path.
 */
export async function withDeathRetries(asl: string, dir: string): Promise<{ file: string; added: boolean }> {
  const definition = JSON.parse(await readFile(asl, 'utf8')) as {
    States: Record<string, { Type: string; Retry?: { ErrorEquals: string[] }[] }>;
  };
  let added = false;
  for (const state of Object.values(definition.States)) {
    if (state.Type !== 'Task') continue;
    const retries = state.Retry ?? [];
    if (retries.some((retry) => retry.ErrorEquals.includes('Runtime.ExitError'))) continue;
    const first = retries[0];
    if (first === undefined) continue;
    first.ErrorEquals.push('Runtime.ExitError');
    added = true;
  }
  const file = join(dir, 'import-with-death-retries.asl.json');
  await writeFile(file, JSON.stringify(definition, null, 2));
  return { file, added };
}

/**
 * The bench stack whose raw-history step dies once as `death` says, on the ASL with retries for
 * `Runtime.ExitError` (`withDeathRetries`; `retriesAdded` says whether the ASL lacked them).
 */
export async function stackWithDeath(name: string, death: Death, dir: string) {
  const machine = await importStateMachine();
  const asl = await withDeathRetries(machine.definitionFile, dir);
  const record: DeathRecord = { killed: false };
  const raw = machine.tasks[RAW_STEP];
  if (raw === undefined) throw new Error(`the import workflow has no ${RAW_STEP}`);
  const bench = await startBenchStack(name, {
    importStateMachine: {
      ...machine,
      definitionFile: asl.file,
      tasks: { ...machine.tasks, [RAW_STEP]: dyingOnce(raw, death, record) },
    },
  });
  return { ...bench, record, retriesAdded: asl.added };
}

const RAW_STEP = 'ImportRawHistoryFunctionArn';
