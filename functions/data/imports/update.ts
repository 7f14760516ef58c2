/**
 * The one conditional UpdateItem of the import item, shared by both writers: every change is
 * conditional on the attempt read, so a stopped attempt's late writes are dropped.
 */
import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { Import, ImportStatus, UseLfs, WaitingFor } from '#domain/imports';
import { conditionalWrite, db, now, tableName } from '../client.ts';
import { importKey } from '../keys.ts';
import { optionalString, toImport } from './items.ts';

/** What the import item held before a change that took a paused execution's task token. */
export interface TakenToken {
  readonly taskToken?: string | undefined;
  readonly executionArn?: string | undefined;
}

/** One change of the import item: what to set and remove, and what else must hold. */
export interface Change {
  readonly set: Readonly<Record<string, unknown>>;
  readonly remove?: readonly string[];
  /** What to add to (a counter: absent counts as 0). */
  readonly add?: Readonly<Record<string, number>>;
  /** Also require this status. */
  readonly status?: ImportStatus;
  /** Also require this waiting state (null: not waiting). */
  readonly waitingFor?: WaitingFor | null;
  /** Also require `useLfs` to be this. */
  readonly useLfs?: UseLfs;
  /** Also require that the owner has not pushed. */
  readonly notPushed?: true;
  /** Also require that following has not ended (a sync attempt's start: `cutOver`). */
  readonly stillFollowing?: true;
}

/**
 * The one builder of import updates: attribute names come from this module's code (the `set` and
 * `remove` keys above), never from a request. Always conditional on the attempt.
 */
function updateInput(
  owner: string,
  repo: string,
  attempt: number,
  change: Change,
  returnValues: 'NONE' | 'ALL_OLD' | 'ALL_NEW',
) {
  const set = { ...change.set, updatedAt: now() };
  const names: Record<string, string> = {};
  const values: Record<string, unknown> = { ':attempt': attempt };
  const assignments = Object.entries(set).map(([name, value], n) => {
    names[`#s${n}`] = name;
    values[`:s${n}`] = value;
    return `#s${n} = :s${n}`;
  });
  const removals = (change.remove ?? []).map((name, n) => {
    names[`#r${n}`] = name;
    return `#r${n}`;
  });
  const additions = Object.entries(change.add ?? {}).map(([name, value], n) => {
    names[`#a${n}`] = name;
    values[`:a${n}`] = value;
    return `#a${n} :a${n}`;
  });
  const conditions = ['attempt = :attempt'];
  if (change.status !== undefined) {
    names['#cstatus'] = 'status';
    values[':cstatus'] = change.status;
    conditions.push('#cstatus = :cstatus');
  }
  if (change.waitingFor !== undefined) {
    names['#cwaiting'] = 'waitingFor';
    if (change.waitingFor === null) conditions.push('attribute_not_exists(#cwaiting)');
    else {
      values[':cwaiting'] = change.waitingFor;
      conditions.push('#cwaiting = :cwaiting');
    }
  }
  if (change.useLfs !== undefined) {
    values[':clfs'] = change.useLfs;
    conditions.push('useLfs = :clfs');
  }
  if (change.notPushed) {
    values[':cyes'] = true;
    conditions.push('(attribute_not_exists(ownerPushed) OR ownerPushed <> :cyes)');
  }
  if (change.stillFollowing) conditions.push('attribute_not_exists(followEnded)');
  return new UpdateCommand({
    TableName: tableName(),
    Key: importKey(owner, repo),
    UpdateExpression: `SET ${assignments.join(', ')}${removals.length > 0 ? ` REMOVE ${removals.join(', ')}` : ''}${additions.length > 0 ? ` ADD ${additions.join(', ')}` : ''}`,
    ConditionExpression: conditions.join(' AND '),
    ExpressionAttributeNames: names,
    ExpressionAttributeValues: values,
    ...(returnValues === 'NONE' ? {} : { ReturnValues: returnValues }),
  });
}

export async function update(owner: string, repo: string, attempt: number, change: Change): Promise<boolean> {
  return (await conditionalWrite(db().send(updateInput(owner, repo, attempt, change, 'NONE')))) !== false;
}

/** `update`, answering with the import as written (one round trip): false when its condition failed. */
export async function updateAndRead(
  owner: string,
  repo: string,
  attempt: number,
  change: Change,
): Promise<Import | false> {
  const result = await conditionalWrite(db().send(updateInput(owner, repo, attempt, change, 'ALL_NEW')));
  return result === false || !result.Attributes ? false : toImport(result.Attributes);
}

/** An update that also takes the paused execution's task token (returned from the old item). */
export async function takeToken(
  owner: string,
  repo: string,
  read: Pick<Import, 'attempt' | 'status'>,
  change: Change,
): Promise<TakenToken | false> {
  const result = await conditionalWrite(
    db().send(
      updateInput(
        owner,
        repo,
        read.attempt,
        {
          status: read.status,
          ...change,
          remove: [...(change.remove ?? []), 'waitingFor', 'taskToken'],
        },
        'ALL_OLD',
      ),
    ),
  );
  if (result === false) return false;
  return {
    taskToken: optionalString(result.Attributes?.taskToken),
    executionArn: optionalString(result.Attributes?.executionArn),
  };
}

/** Exposed for unit tests: the update an import change sends (names fixed, values bound). */
export const importUpdateInput = (owner: string, repo: string, attempt: number, change: Change) =>
  updateInput(owner, repo, attempt, change, 'NONE').input;
