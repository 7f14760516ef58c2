import type { Authorization } from '#domain/authorizations';
import type { ReportedToken, RevocationNotice } from '#domain/credential-reports';
import { getItems, itemOf, queryAll, type TransactItem, tableName } from './client.ts';
import { countInWindow } from './counters.ts';
import {
  credentialReportWindowKey,
  type Key,
  REVOCATION_NOTICE_PREFIX,
  refreshTokenKey,
  revocationNoticeKey,
  tokenKey,
  userPartition,
} from './keys.ts';
import { type StoredRefreshToken, toRefreshToken } from './refresh-tokens.ts';
import { ITEM_ABSENT, TABLE, typed } from './table.ts';
import { type TokenLookup, toTokenLookup } from './token-lookup.ts';

/** The credential revocation API's data: the caller's report count, the reported tokens, the owners' notices. */

/**
 * Counts one report in the caller's current window: a conditional ADD below `max`, so concurrent
 * reports cannot exceed the limit. False when the window is full.
 */
export async function countReport(
  address: string,
  window: number,
  max: number,
  expiresAt: number,
): Promise<boolean> {
  return (
    (await countInWindow(
      credentialReportWindowKey(address, window),
      'CredentialReportWindow',
      max,
      expiresAt,
    )) !== false
  );
}

/** BatchGetItem takes 100 keys a call. */
const BATCH = 100;

/**
 * The items the reported tokens name: access tokens' lookup items and refresh token items, read
 * strongly consistently 100 keys a round trip, all round trips sent together.
 */
export async function findReportedTokens(
  reported: readonly ReportedToken[],
): Promise<{ access: TokenLookup[]; refresh: StoredRefreshToken[] }> {
  const keyOf = (token: ReportedToken): Key =>
    token.kind === 'access' ? tokenKey(token.tokenHash) : refreshTokenKey(token.tokenHash);
  const batches: ReportedToken[][] = [];
  for (let start = 0; start < reported.length; start += BATCH)
    batches.push(reported.slice(start, start + BATCH));
  const found = await Promise.all(batches.map((batch) => getItems(batch.map(keyOf), true)));
  const access: TokenLookup[] = [];
  const refresh: StoredRefreshToken[] = [];
  batches.forEach((batch, index) => {
    const items = found[index] ?? new Map();
    for (const token of batch) {
      const item = itemOf(items, keyOf(token));
      if (!item) continue;
      if (token.kind === 'access') access.push(toTokenLookup(item, token.tokenHash));
      else refresh.push(toRefreshToken(item));
    }
  });
  return { access, refresh };
}

/** The notice item, put in the transaction that deletes the authorization (see authorization-change.ts). */
export function putRevocationNotice(
  authorization: Pick<Authorization, 'login'>,
  notice: RevocationNotice,
  expiresAt: number,
): TransactItem {
  return {
    Put: {
      TableName: tableName(),
      Item: {
        ...revocationNoticeKey(authorization.login, notice.revokedAt, notice.authorizationId),
        ...typed('RevocationNotice'),
        kind: notice.kind,
        authorizationId: notice.authorizationId,
        tokenLastEight: notice.tokenLastEight,
        clientId: notice.clientId,
        note: notice.note,
        revokedAt: notice.revokedAt,
        createdAt: notice.revokedAt,
        updatedAt: notice.revokedAt,
        expiresAt,
      },
      ConditionExpression: ITEM_ABSENT,
    },
  };
}

/** The user's revocation notices, newest first (`limit` at most); expired ones left out. */
export async function revocationNoticesOf(login: string, limit: number): Promise<RevocationNotice[]> {
  const { items } = await queryAll(
    {
      KeyConditionExpression: `${TABLE.partitionKey} = :pk AND begins_with(${TABLE.sortKey}, :prefix)`,
      ExpressionAttributeValues: { ':pk': userPartition(login), ':prefix': REVOCATION_NOTICE_PREFIX },
      ScanIndexForward: false,
    },
    limit,
  );
  const nowSeconds = Date.now() / 1000;
  return items
    .filter((item) => Number(item.expiresAt) > nowSeconds)
    .map((item) => ({
      kind: item.kind as RevocationNotice['kind'],
      authorizationId: Number(item.authorizationId),
      tokenLastEight: String(item.tokenLastEight),
      clientId: String(item.clientId ?? ''),
      note: (item.note as string | null | undefined) ?? null,
      revokedAt: String(item.revokedAt),
    }));
}
