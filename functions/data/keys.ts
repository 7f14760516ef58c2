/**
 * Every partition and sort key of the table is built here and nowhere else. Upper-case entity
 * prefixes, `#` separators; logins and repository names are lower-cased because GitHub treats
 * them case-insensitively. Each builder names the access pattern it serves (see
 * docs/data-model.md for the full table).
 */

export interface Key {
  readonly PK: string;
  readonly SK: string;
}

export interface Gsi1Key {
  readonly GSI1PK: string;
  readonly GSI1SK: string;
}

const lower = (value: string): string => value.toLowerCase();

/** Zero-padded so that string order is numeric order (ids are allocated by counters). */
export const sortableId = (id: number): string => String(id).padStart(12, '0');

/** User partition: profile, credential, authorizations, grants and SSH keys of one user. */
export const userPartition = (login: string): string => `USER#${lower(login)}`;

/** User by login (GetItem), and with the credential in one Query of the user partition. */
export const userProfileKey = (login: string): Key => ({ PK: userPartition(login), SK: 'PROFILE' });

/** Password hash and TOTP secret; also the item whose existence makes a login unique. */
export const credentialKey = (login: string): Key => ({ PK: userPartition(login), SK: 'CREDENTIAL' });

/** User by numeric id (GSI1). */
export const userIdIndexKey = (id: number): Gsi1Key => ({ GSI1PK: `USERID#${id}`, GSI1SK: 'USER' });

/** OAuth application by client_id (GetItem). */
export const appKey = (clientId: string): Key => ({ PK: `APP#${clientId}`, SK: 'APP' });

/** Applications a user owns, by client_id (GSI1, begins_with `APP#`). */
export const appOwnerIndexKey = (ownerLogin: string, clientId: string): Gsi1Key => ({
  GSI1PK: `OWNER#${lower(ownerLogin)}`,
  GSI1SK: `APP#${clientId}`,
});

/** Repository by owner and name (GetItem); its import, authors and large files share the partition. */
export const repoPartition = (owner: string, name: string): string => `REPO#${lower(owner)}/${lower(name)}`;
export const repoKey = (owner: string, name: string): Key => ({ PK: repoPartition(owner, name), SK: 'REPO' });

/** Repositories a user owns, by name (GSI1, begins_with `REPO#`). */
export const repoOwnerIndexKey = (ownerLogin: string, name: string): Gsi1Key => ({
  GSI1PK: `OWNER#${lower(ownerLogin)}`,
  GSI1SK: `REPO#${lower(name)}`,
});

/** Atomic id counter per entity kind (UpdateItem ADD); ids are never reused. */
export const counterKey = (entity: string): Key => ({ PK: `COUNTER#${entity}`, SK: 'COUNTER' });
