import { nextId } from '#data/counters';
import { enterStatus } from '#data/imports/progress';
import { createImport } from '#data/imports/requests';
import { DEFAULT_IMPORT_CHOICES, type ImportStatus } from '#domain/imports';
import { recordedEvents } from '#local/event-bus';
import { statusChanged } from '#services/import-events';
import { median, ms } from './measure.ts';
import { admin, BENCH_PASSWORD, startBenchStack } from './support.ts';

/*
 * What publishing an import event adds to a status change (issue 28): a status write alone against
 * the same write followed by its events (one GetItem of the import, one PutEvents to the local
 * stand-in), in alternating rounds on one stack, two imports flipping between two statuses.
 */

export interface EventsResult {
  readonly rounds: number;
  readonly writeMs: number;
  readonly publishedMs: number;
  readonly recorded: number;
}

async function newImport(repo: string): Promise<number> {
  const made = await createImport({
    ownerLogin: 'bench',
    repoName: repo,
    importId: await nextId('import'),
    vcs: 'git',
    vcsUrl: `https://origin.example/${repo}.git`,
    status: 'importing',
    choices: DEFAULT_IMPORT_CHOICES,
  });
  if (made.kind !== 'created') throw new Error(`import not created: ${made.kind}`);
  return made.record.attempt;
}

export async function measureEvents(rounds: number): Promise<EventsResult> {
  const { stack, endpointsFile, stop } = await startBenchStack('events');
  try {
    await admin(endpointsFile, 'user', 'create', 'bench', '--password', BENCH_PASSWORD);
    for (const repo of ['plain', 'evented']) await admin(endpointsFile, 'repo', 'create', `bench/${repo}`);
    const plain = { repo: 'plain', attempt: await newImport('plain'), status: 'importing' as ImportStatus };
    const evented = {
      repo: 'evented',
      attempt: await newImport('evented'),
      status: 'importing' as ImportStatus,
    };
    const flip = (status: ImportStatus): ImportStatus => (status === 'importing' ? 'mapping' : 'importing');
    const write = async (target: typeof plain, publish: boolean) => {
      const next = flip(target.status);
      const started = performance.now();
      if (!(await enterStatus('bench', target.repo, target.attempt, next))) throw new Error('not written');
      if (publish) await statusChanged('bench', target.repo, target.status, { attempt: target.attempt });
      target.status = next;
      return performance.now() - started;
    };
    for (let i = 0; i < 20; i++) {
      await write(plain, false);
      await write(evented, true);
    }
    const writes: number[] = [];
    const published: number[] = [];
    for (let round = 0; round < rounds; round++) {
      // Alternating, so a change in the machine's load falls on both.
      if (round % 2 === 0) {
        writes.push(await write(plain, false));
        published.push(await write(evented, true));
      } else {
        published.push(await write(evented, true));
        writes.push(await write(plain, false));
      }
    }
    const recorded = (await recordedEvents(stack.eventsFile)).length;
    return { rounds, writeMs: median(writes), publishedMs: median(published), recorded };
  } finally {
    await stop();
  }
}

export function eventsReport(result: EventsResult, machine: string): string {
  return `Measured ${machine}: a status change of an import (one conditional UpdateItem, DynamoDB Local) alone, and followed by its import event (\`statusChanged\`: one GetItem of the import, the import JSON, one PutEvents to the local stand-in, which appends to its file), in ${result.rounds} alternating rounds on one local stack. The stand-in recorded ${result.recorded} events (warm-up included). In AWS the PutEvents call is a network round trip to EventBridge instead of loopback.

| Status change | median | ratio |
|---|---|---|
| write alone | ${ms(result.writeMs)} | 1.00 |
| write and its event | ${ms(result.publishedMs)} | ${(result.publishedMs / result.writeMs).toFixed(2)} |`;
}
