import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { admin } from '#test/admin';
import { smoke } from '#test/smoke';
import { basicAuth, json } from '#test/stack';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const PASSWORD = 'smoker-pass-123';

let child: ChildProcess;
let webUrl: string;
let gitFrontendUrl: string;
let token: string;

/** `npm start` itself (bin/local.ts), in memory on a free port: what the README tells people to run. */
beforeAll(async () => {
  const endpointsFile = join(await mkdtemp(join(tmpdir(), 'smoke-')), 'local.json');
  child = spawn(join(ROOT, 'node_modules/.bin/tsx'), ['bin/local.ts', '--in-memory'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', LOCAL_ENDPOINTS_FILE: endpointsFile, LOG_LEVEL: 'silent' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const output = await new Promise<string>((resolve, reject) => {
    let printed = '';
    const read = (chunk: Buffer) => {
      printed += chunk;
      if (/Ready in/.test(printed)) resolve(printed);
    };
    child.stdout?.on('data', read);
    child.stderr?.on('data', read);
    child.on('exit', (code) => reject(new Error(`npm start exited (${code}): ${printed}`)));
  });
  webUrl = /Web pages:\s+(\S+)/.exec(output)?.[1] ?? '';
  gitFrontendUrl = /the Git front end at (\S+)\)/.exec(output)?.[1] ?? '';

  expect((await admin(endpointsFile, 'user', 'create', 'smoker', '--password', PASSWORD)).code).toBe(0);
  const credentials = { Authorization: basicAuth('smoker', PASSWORD) };
  const authorization = await fetch(`${webUrl}/api/v3/authorizations`, {
    method: 'POST',
    headers: credentials,
    body: JSON.stringify({ scopes: ['repo'], note: 'smoke check' }),
  });
  expect(authorization.status).toBe(201);
  token = (await json(authorization)).token;
  const repo = await fetch(`${webUrl}/api/v3/user/repos`, {
    method: 'POST',
    headers: credentials,
    body: JSON.stringify({ name: 'smoked', private: true }),
  });
  expect(repo.status).toBe(201);
});

afterAll(async () => {
  if (child?.exitCode !== null) return;
  const exited = new Promise((resolve) => child.on('exit', resolve));
  child.kill('SIGINT');
  await exited;
});

describe('npm run smoke (bin/smoke.ts) against npm start', () => {
  it('passes every check with a token and a private repository, and never prints the token', async () => {
    const result = await smoke([webUrl, '--repo', 'smoker/smoked'], { SMOKE_TOKEN: token });

    expect(result.code).toBe(0);
    expect(Object.keys(result.checks)).toEqual(['api', 'oauth-metadata', 'token', 'git']);
    expect(Object.values(result.checks).map((check) => check.outcome)).toEqual([
      'PASS',
      'PASS',
      'PASS',
      'PASS',
    ]);
    expect(result.checks.token?.message).toMatch(/200 as smoker/);
    expect(result.checks.git?.message).toMatch(/ref advertisement/);
    expect(result.stdout + result.stderr).not.toContain(token);
  });

  it('without a token skips the token check, and proves the Git path with an absent repository', async () => {
    const result = await smoke([webUrl]);

    expect(result.code).toBe(0);
    expect(result.checks.token?.outcome).toBe('SKIP');
    expect(result.checks.git).toEqual({
      outcome: 'PASS',
      message: expect.stringMatching(/no such repository.*401 from the Git front end/),
    });
  });

  it('fails naming the distribution and the API stage when the URL leads somewhere else than the API', async () => {
    // The Git front end's own address answers Git but not the API: a default behaviour gone wrong.
    const result = await smoke([gitFrontendUrl]);

    expect(result.code).toBe(1);
    for (const check of ['api', 'oauth-metadata']) {
      expect(result.checks[check]?.outcome).toBe('FAIL');
      expect(result.checks[check]?.message).toMatch(/404 text\/plain/);
      expect(result.checks[check]?.message).toMatch(
        /default behaviour of the CloudFront distribution WebDistribution… \(stack OAuthImportService\) must lead to the API Gateway stage ApiRestApiDeploymentStageprod…/,
      );
    }
    expect(result.checks.git?.outcome).toBe('PASS');
  });

  it('fails naming the table for a token the deployment does not know, under the stack name given', async () => {
    const unknown = `ghp_${randomBytes(18).toString('hex')}`;
    const result = await smoke([webUrl, '--stack', 'Staging'], { SMOKE_TOKEN: unknown });

    expect(result.code).toBe(1);
    expect(result.checks.token).toEqual({
      outcome: 'FAIL',
      message: expect.stringContaining(
        '401 Bad credentials: the token is not one of the DynamoDB table Table… (stack Staging)',
      ),
    });
    expect(result.checks.api?.outcome).toBe('PASS');
    expect(result.stdout).not.toContain(unknown);
  });

  it('refuses a URL with a path, since the service is known by its origin', async () => {
    const result = await smoke([`${webUrl}/api/v3`]);

    expect(result.code).toBe(2);
    expect(result.stderr).toContain(`give the web origin without a path: ${webUrl}`);
  });
});
