import { beforeAll, describe, expect, it } from 'vitest';
import { grantsOf, TOKENS_PER_SCOPE_SET } from '#domain/authorizations';
import type { Scope } from '#domain/scopes';
import { freshTable } from '#test/dynamodb';

let data: typeof import('#data/authorizations');
let seq = 0;
const tokenFields = () => {
  seq += 1;
  const hash = `${String(seq).padStart(8, '0')}${'ab'.repeat(28)}`;
  return { tokenHash: hash, tokenLastEight: hash.slice(-8) };
};
const appToken = (
  login: string,
  clientId: string,
  scopes: Scope[],
  extra: Partial<{ fingerprint: string; note: string }> = {},
) => ({
  login,
  clientId,
  scopes,
  note: extra.note ?? null,
  noteUrl: null,
  fingerprint: extra.fingerprint ?? null,
  ...tokenFields(),
  limit: TOKENS_PER_SCOPE_SET,
});

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  data = await import('#data/authorizations');
});

describe('authorizations data', () => {
  it('get-or-create: exactly one of 20 concurrent identical requests creates', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => data.getOrCreateAuthorization(appToken('alice', 'app1', ['gist']))),
    );
    expect(results.filter((r) => r.kind === 'created')).toHaveLength(1);
    expect(new Set(results.map((r) => r.authorization.id)).size).toBe(1);
    const state = await data.readUserAuthState('alice');
    expect(state.authorizations.filter((a) => a.clientId === 'app1')).toHaveLength(1);
    expect(grantsOf('alice', state.authorizations, state.grants.values())).toHaveLength(1);
  });

  it('get-or-create keeps fingerprints apart and adopts an authorization created without the pointer', async () => {
    const posted = await data.createAuthorization({
      ...appToken('bob', 'app2', ['repo']),
      claimFingerprint: false,
    });
    expect(posted.kind).toBe('created');
    const adopted = await data.getOrCreateAuthorization(appToken('bob', 'app2', []));
    expect(adopted).toMatchObject({ kind: 'existing' });
    expect(adopted.authorization.id).toBe(posted.kind === 'created' ? posted.authorization.id : -1);
    const other = await data.getOrCreateAuthorization(appToken('bob', 'app2', [], { fingerprint: 'laptop' }));
    expect(other.kind).toBe('created');
    const again = await data.getOrCreateAuthorization(appToken('bob', 'app2', [], { fingerprint: 'laptop' }));
    expect(again).toMatchObject({ kind: 'existing', authorization: { id: other.authorization.id } });
  });

  it('refuses a second personal token with the same note, writing nothing', async () => {
    const first = await data.createAuthorization({
      ...appToken('carol', '', [], { note: 'deploy' }),
      claimFingerprint: false,
    });
    expect(first.kind).toBe('created');
    const second = await data.createAuthorization({
      ...appToken('carol', '', [], { note: 'deploy' }),
      claimFingerprint: false,
    });
    expect(second.kind).toBe('note-taken');
    expect((await data.readUserAuthState('carol')).authorizations).toHaveLength(1);
  });

  it('the 11th token of a user/app/scope set revokes the oldest, atomically', async () => {
    const created = [];
    for (let i = 0; i < 11; i++)
      created.push(
        await data.createAuthorization({ ...appToken('dave', 'app3', ['user']), claimFingerprint: false }),
      );
    const ids = created.map((c) => (c.kind === 'created' ? c.authorization.id : -1));
    const last = created[10];
    expect(last?.kind === 'created' && last.revoked?.id).toBe(ids[0]);
    const state = await data.readUserAuthState('dave');
    expect(state.authorizations.map((a) => a.id)).toEqual(ids.slice(1));
    expect(
      await data.lookupToken(created[0]?.kind === 'created' ? created[0].authorization.tokenHash : ''),
    ).toBeUndefined();
    // Another scope set is counted separately.
    const other = await data.createAuthorization({
      ...appToken('dave', 'app3', ['gist']),
      claimFingerprint: false,
    });
    expect(other.kind === 'created' && other.revoked).toBeFalsy();
    const after = await data.readUserAuthState('dave');
    expect(after.grants.get('app3')?.tokens).toBe(11);
    expect(after.authorizations.filter((a) => a.scopes.includes('user'))).toHaveLength(10);
  });

  it('concurrent creates at the token limit all succeed and leave exactly 10 tokens', async () => {
    for (let i = 0; i < 9; i++)
      await data.createAuthorization({ ...appToken('gus', 'app5', ['repo']), claimFingerprint: false });
    const results = await Promise.all(
      Array.from({ length: 40 }, () =>
        data.createAuthorization({ ...appToken('gus', 'app5', ['repo']), claimFingerprint: false }),
      ),
    );
    expect(results.every((r) => r.kind === 'created')).toBe(true);
    const state = await data.readUserAuthState('gus');
    expect(state.authorizations).toHaveLength(10);
    expect(state.grants.get('app5')?.tokens).toBe(10);
  });

  it('reset swaps the token lookup; delete removes it and the grant with the last token', async () => {
    const created = await data.createAuthorization({
      ...appToken('erin', 'app4', ['repo']),
      claimFingerprint: false,
    });
    if (created.kind !== 'created') throw new Error('not created');
    const next = tokenFields();
    const reset = await data.resetToken(created.authorization, next);
    expect(reset?.tokenHash).toBe(next.tokenHash);
    expect(await data.lookupToken(created.authorization.tokenHash)).toBeUndefined();
    expect(await data.lookupToken(next.tokenHash)).toMatchObject({
      login: 'erin',
      authorizationId: created.authorization.id,
    });
    expect(await data.resetToken(created.authorization, tokenFields())).toBeUndefined();

    expect(await data.deleteAuthorization('erin', created.authorization.id)).toBe(true);
    expect(await data.lookupToken(next.tokenHash)).toBeUndefined();
    const state = await data.readUserAuthState('erin');
    expect(state.grants.size).toBe(0);
    expect(state.pointers.size).toBe(0);
    expect(await data.deleteAuthorization('erin', created.authorization.id)).toBe(false);
  });

  it("keeps the token lookup's copy equal to the authorization through create, update, reset and use", async () => {
    const created = await data.createAuthorization({
      ...appToken('hal', 'app6', ['gist'], { fingerprint: 'fp' }),
      claimFingerprint: true,
    });
    if (created.kind !== 'created') throw new Error('not created');
    const same = async (tokenHash: string) => {
      const stored = await data.getAuthorization('hal', created.authorization.id);
      expect((await data.lookupToken(tokenHash))?.authorization).toEqual(stored);
    };
    await same(created.authorization.tokenHash);
    await data.updateAuthorization('hal', created.authorization.id, {
      scopes: ['repo'],
      note: 'n',
      noteUrl: 'https://n.example',
      fingerprint: 'fp2',
    });
    await same(created.authorization.tokenHash);
    const current = await data.getAuthorization('hal', created.authorization.id);
    const reset = await data.resetToken(current ?? created.authorization, tokenFields());
    await same(reset?.tokenHash ?? '');
    const lookup = await data.lookupToken(reset?.tokenHash ?? '');
    if (lookup) await data.recordTokenUse(lookup, '2026-11-21T12:00:00Z');
    await same(reset?.tokenHash ?? '');
    expect((await data.getAuthorization('hal', created.authorization.id))?.lastUsedAt).toBe(
      '2026-11-21T12:00:00Z',
    );
  });

  it('update moves the note pointer and refuses a clash', async () => {
    const a = await data.createAuthorization({
      ...appToken('fay', '', [], { note: 'one' }),
      claimFingerprint: false,
    });
    const b = await data.createAuthorization({
      ...appToken('fay', '', [], { note: 'two' }),
      claimFingerprint: false,
    });
    if (a.kind !== 'created' || b.kind !== 'created') throw new Error('not created');
    expect(await data.updateAuthorization('fay', b.authorization.id, { note: 'one' })).toEqual({
      kind: 'note-taken',
    });
    const renamed = await data.updateAuthorization('fay', a.authorization.id, {
      note: 'three',
      scopes: ['gist'],
    });
    expect(renamed).toMatchObject({ kind: 'updated', authorization: { note: 'three', scopes: ['gist'] } });
    expect((await data.lookupToken(a.authorization.tokenHash))?.scopes).toEqual(['gist']);
    // "one" is free again.
    expect((await data.updateAuthorization('fay', b.authorization.id, { note: 'one' })).kind).toBe('updated');
  });

  it('a token minted from a state read before a grant revocation cannot commit after it', async () => {
    await data.createAuthorization({ ...appToken('ida', 'app7', ['gist']), claimFingerprint: false });
    await data.deleteGrant('ida', 'app7');
    // A code issued before the revocation carries generation 0: its exchange is refused.
    const fromCode = await data.createAuthorization({
      ...appToken('ida', 'app7', ['gist']),
      claimFingerprint: false,
      grantGeneration: 0,
    });
    expect(fromCode).toEqual({ kind: 'grant-revoked' });
    expect((await data.readUserAuthState('ida')).authorizations).toEqual([]);
    // Without a code, a create reads the generation when it registers: it comes after.
    const later = await data.createAuthorization({
      ...appToken('ida', 'app7', ['gist']),
      claimFingerprint: false,
    });
    expect(later.kind).toBe('created');
    expect(await data.getGrantGeneration('ida', 'app7')).toBe(1);
  });

  it('does not retry a validation error (a fingerprint over the key size limit) as contention', async () => {
    const attempt = data.getOrCreateAuthorization(
      appToken('jo', 'app8', ['gist'], { fingerprint: 'f'.repeat(3000) }),
    );
    await expect(attempt).rejects.toMatchObject({ name: 'TransactionCanceledException' });
    expect((await data.readUserAuthState('jo')).authorizations).toEqual([]);
  });
});
