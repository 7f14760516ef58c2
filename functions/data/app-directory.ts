import { UpdateCommand } from '@aws-sdk/lib-dynamodb';
import type { AppTokenSummary, OwnedApp } from '#domain/apps';
import type { Scope } from '#domain/scopes';
import { conditionalWrite, db, now, queryAll, tableName } from './client.ts';
import { appAuthorizationIndexKey, appKey, appOwnerIndexKey } from './keys.ts';
import { TABLE } from './table.ts';

/*
 * What the developer settings pages read about applications: the applications a user owns and the
 * tokens an application holds across users, both from GSI1 (eventually consistent, so an item
 * written a moment ago may be missing for a moment), and the rotation of a client secret.
 */

const INDEX = TABLE.indexes.GSI1;

/** GSI1 items under one partition (whose sort key starts with `prefix`), at most `limit` of them. */
async function queryIndex(
  partition: string,
  prefix: string | undefined,
  attributes: readonly string[],
  limit: number,
): Promise<{ items: Record<string, unknown>[]; more: boolean }> {
  const names: Record<string, string> = { '#pk': INDEX.partitionKey };
  if (prefix) names['#sk'] = INDEX.sortKey;
  for (const [index, attribute] of attributes.entries()) names[`#a${index}`] = attribute;
  return queryAll(
    {
      IndexName: 'GSI1',
      KeyConditionExpression: prefix ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk',
      ProjectionExpression: attributes.map((_, index) => `#a${index}`).join(', '),
      ExpressionAttributeNames: names,
      ExpressionAttributeValues: { ':pk': partition, ...(prefix ? { ':prefix': prefix } : {}) },
    },
    limit,
  );
}

/** The applications `login` owns, in client_id order (at most `limit`; `more` when there are others). */
export async function appsOwnedBy(login: string, limit = 100): Promise<{ apps: OwnedApp[]; more: boolean }> {
  const { items, more } = await queryIndex(
    appOwnerIndexKey(login, '').GSI1PK,
    appOwnerIndexKey(login, '').GSI1SK,
    ['clientId', 'name', 'suspended', 'createdAt'],
    limit,
  );
  const apps = items.map((item) => ({
    clientId: String(item.clientId),
    name: String(item.name),
    suspended: Boolean(item.suspended),
    createdAt: String(item.createdAt),
  }));
  return { apps, more };
}

/** The tokens an application holds, by user login then id (at most `limit`; `more` when there are others). */
export async function tokensOfApp(
  clientId: string,
  limit = 100,
): Promise<{ tokens: AppTokenSummary[]; more: boolean }> {
  const { items, more } = await queryIndex(
    appAuthorizationIndexKey(clientId, '', 0).GSI1PK,
    undefined,
    ['id', 'login', 'scopes', 'createdAt', 'lastUsedAt'],
    limit,
  );
  const tokens = items.map((item) => ({
    id: Number(item.id),
    login: String(item.login),
    scopes: (item.scopes as Scope[] | undefined) ?? [],
    createdAt: String(item.createdAt),
    lastUsedAt: (item.lastUsedAt as string | null | undefined) ?? null,
  }));
  return { tokens, more };
}

/**
 * Replaces an application's client secret hash, only while `ownerLogin` owns the application: the
 * old secret fails on the very next request (application credentials are read strongly). False when
 * there is no such application of that owner.
 */
export async function rotateClientSecret(
  clientId: string,
  ownerLogin: string,
  secretHash: string,
): Promise<boolean> {
  const written = await conditionalWrite(
    db().send(
      new UpdateCommand({
        TableName: tableName(),
        Key: appKey(clientId),
        UpdateExpression: 'SET #secretHash = :hash, #updatedAt = :now',
        ConditionExpression: 'attribute_exists(#pk) AND #ownerLogin = :owner',
        ExpressionAttributeNames: {
          '#pk': TABLE.partitionKey,
          '#secretHash': 'secretHash',
          '#updatedAt': 'updatedAt',
          '#ownerLogin': 'ownerLogin',
        },
        ExpressionAttributeValues: { ':hash': secretHash, ':now': now(), ':owner': ownerLogin },
      }),
    ),
  );
  return written !== false;
}
