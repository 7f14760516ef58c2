import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';
import { freshTable } from '#test/dynamodb';

// The data modules read the table from the environment, so point it at a fresh table first.
let data: {
  users: typeof import('#data/users');
  counters: typeof import('#data/counters');
  repositories: typeof import('#data/repositories');
  apps: typeof import('#data/apps');
};

beforeAll(async () => {
  const table = await freshTable();
  process.env.TABLE_NAME = table.tableName;
  process.env.DYNAMODB_ENDPOINT = table.endpoint;
  data = {
    users: await import('#data/users'),
    counters: await import('#data/counters'),
    repositories: await import('#data/repositories'),
    apps: await import('#data/apps'),
  };
});

describe('counters', () => {
  it('hand out distinct, increasing ids under concurrency', async () => {
    const ids = await Promise.all(Array.from({ length: 25 }, () => data.counters.nextId('key')));
    expect(new Set(ids).size).toBe(25);
    expect(Math.min(...ids)).toBe(1);
    expect(Math.max(...ids)).toBe(25);
  });

  it('reserve authorization ids ten at a time: 25 ids cost three counter writes', async () => {
    const ids = await Promise.all(Array.from({ length: 25 }, () => data.counters.nextId('authorization')));
    expect(ids).toEqual(Array.from({ length: 25 }, (_, i) => i + 1));
    // The next process to reserve starts after this one's third block.
    expect(await idsFromAnotherProcess(1)).toEqual([31]);
  });

  it('never give two processes the same authorization id', async () => {
    const [here, there] = await Promise.all([
      Promise.all(Array.from({ length: 15 }, () => data.counters.nextId('authorization'))),
      idsFromAnotherProcess(15),
    ]);
    const all = [...here, ...there];
    expect(new Set(all).size).toBe(30);
    // Each process hands out its own block in order.
    expect(there).toEqual([...there].sort((a, b) => a - b));
  });
});

/** `count` authorization ids taken by a separate Node process on the same table (another Lambda container). */
async function idsFromAnotherProcess(count: number): Promise<number[]> {
  const script = `const { nextId } = await import('#data/counters');
const ids = [];
for (let i = 0; i < ${count}; i++) ids.push(await nextId('authorization'));
process.stdout.write(JSON.stringify(ids));
process.exit(0);`;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', '--input-type=module', '-e', script],
    { env: process.env },
  );
  return JSON.parse(stdout) as number[];
}

describe('users', () => {
  it('exactly one of 20 concurrent creates of the same login (any case) wins', async () => {
    const attempts = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        data.users.createUser({ login: i % 2 ? 'Racer' : 'racer', passwordHash: `h${i}` }),
      ),
    );
    const winners = attempts.filter((user) => user !== null);
    expect(winners).toHaveLength(1);
    const stored = (await data.users.getLoginRecord('RACER', 0)).account;
    expect(stored?.user.id).toBe(winners[0]?.id);
    // The profile and credential came from the same transaction.
    expect(stored?.credential.passwordHash).toBe(`h${attempts.findIndex((user) => user !== null)}`);
  });

  it('finds users by login and by id; the credential stays out of the profile', async () => {
    const user = await data.users.createUser({
      login: 'Finder',
      passwordHash: 'secret-hash',
      email: 'f@example.com',
    });
    expect(user).not.toBeNull();
    const byLogin = await data.users.getUser('finder');
    expect(byLogin).toEqual(user);
    expect(JSON.stringify(byLogin)).not.toContain('secret-hash');
    expect(await data.users.getUserById(user?.id ?? 0)).toEqual(user);
    expect(await data.users.getLoginRecord('nobody', 0)).toEqual({ failures: 0, previousFailures: 0 });
  });
});

describe('login protections', () => {
  it('reserve attempts atomically; only settled failures count, read with the credential', async () => {
    await data.users.createUser({ login: 'counted', passwordHash: 'h' });
    // Eight concurrent reservations against a limit of five: exactly five succeed.
    const reserved = await Promise.all(
      Array.from({ length: 8 }, () => data.users.reserveLoginAttempt('counted', 7, 5, 9_999_999_999)),
    );
    expect(reserved.filter(Boolean)).toHaveLength(5);
    // Attempts still being checked hold their slot but are no failures yet.
    expect((await data.users.getLoginRecord('counted', 7)).failures).toBe(0);
    for (let i = 0; i < 4; i++) await data.users.settleLoginAttempt('counted', 7, true);
    await data.users.settleLoginAttempt('counted', 7, false);
    expect(await data.users.reserveLoginAttempt('counted', 6, 1, 9_999_999_999)).toBe(true);
    await data.users.settleLoginAttempt('counted', 6, true);
    expect((await data.users.getLoginRecord('counted', 7)).failures).toBe(5);
    expect((await data.users.getLoginRecord('counted', 8)).failures).toBe(4);
    expect((await data.users.getLoginRecord('counted', 9)).failures).toBe(0);
    expect(await data.users.getLoginRecord('counted', 7)).toMatchObject({ failures: 5, previousFailures: 1 });
    // A given-back slot is free again; a settled failure is not.
    expect(await data.users.reserveLoginAttempt('counted', 7, 5, 9_999_999_999)).toBe(true);
    expect(await data.users.reserveLoginAttempt('counted', 7, 5, 9_999_999_999)).toBe(false);
  });

  it('spend each TOTP step once, and never an older one', async () => {
    expect(await data.users.consumeOtpStep('counted', 100)).toBe(true);
    expect(await data.users.consumeOtpStep('counted', 100)).toBe(false);
    expect(await data.users.consumeOtpStep('counted', 99)).toBe(false);
    expect(await data.users.consumeOtpStep('counted', 101)).toBe(true);
    expect(await data.users.consumeOtpStep('ghost', 1)).toBe(false);
  });
});

describe('repositories and applications', () => {
  it('refuse a duplicate repository name per owner, case-insensitively', async () => {
    expect(await data.repositories.createRepository({ ownerLogin: 'finder', name: 'Tool' })).not.toBeNull();
    expect(await data.repositories.createRepository({ ownerLogin: 'finder', name: 'tool' })).toBeNull();
    expect(await data.repositories.createRepository({ ownerLogin: 'racer', name: 'tool' })).not.toBeNull();
  });

  it('store only the hash of a client secret', async () => {
    const { registerApp } = await import('#services/apps');
    const { app, clientSecret } = await registerApp({
      ownerLogin: 'finder',
      name: 'A',
      url: 'https://a.example',
      callbackUrl: 'https://a.example/cb',
    });
    const stored = await data.apps.getApp(app.clientId);
    expect(stored?.secretHash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(stored)).not.toContain(clientSecret);
  });
});
