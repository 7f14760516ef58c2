import { describe, expect, it } from 'vitest';
import { importUpdateInput } from '#data/imports/update';
import {
  findProjectChoice,
  type Import,
  isAuthorEmail,
  isAuthorName,
  parseSince,
  showsPushProgress,
  showsRawProgress,
} from '#domain/imports';
import { importAuthorJson, importJson, largeFileJson } from '#http/json/import';
import { acceptsPreview } from '#http/middleware/http-stack';
import type { PublicUrls } from '#shared/urls';

const urls: PublicUrls = {
  api: 'https://api.example/api/v3',
  auth: 'https://web.example',
  settings: 'https://web.example',
  import: 'https://import.example',
};

const base: Import = {
  ownerLogin: 'octocat',
  repoName: 'socm',
  attempt: 1,
  importId: 7,
  vcs: 'subversion',
  vcsUrl: 'http://svn.example/svn/project',
  useLfs: 'undecided',
  status: 'importing',
  commitCount: 1042,
  percent: 42,
  pushPercent: null,
  hasLargeFiles: false,
  largeFilesCount: 0,
  largeFilesSize: 0,
  authorsCount: 0,
  hasCredentials: true,
  waitingFor: 'credentials',
  taskToken: 'secret-token',
  executionArn: 'arn:aws:states:us-east-1:1:execution:Import:x',
  ownerPushed: false,
  createdAt: '2016-01-01T00:00:00Z',
  updatedAt: '2016-01-01T00:00:00Z',
};

describe('importJson', () => {
  it('renders GitHub’s importing example, in its field order, with import_percent and percent', () => {
    expect(importJson(base, urls)).toEqual({
      vcs: 'subversion',
      use_lfs: 'undecided',
      vcs_url: 'http://svn.example/svn/project',
      status: 'importing',
      status_text: 'Importing...',
      import_percent: 42,
      percent: 42,
      commit_count: 1042,
      has_large_files: false,
      large_files_size: 0,
      large_files_count: 0,
      authors_count: 0,
      url: 'https://api.example/api/v3/repos/octocat/socm/import',
      html_url: 'https://import.example/octocat/socm/import',
      authors_url: 'https://api.example/api/v3/repos/octocat/socm/import/authors',
      repository_url: 'https://api.example/api/v3/repos/octocat/socm',
    });
    expect(Object.keys(importJson(base, urls)).slice(0, 5)).toEqual([
      'vcs',
      'use_lfs',
      'vcs_url',
      'status',
      'status_text',
    ]);
  });

  it('never shows the task token, execution ARN or credentials', () => {
    const text = JSON.stringify(importJson(base, urls));
    expect(text).not.toContain('secret-token');
    expect(text).not.toContain('arn:');
    expect(text).not.toMatch(/credential|waiting/i);
  });

  it('shows push_percent while pushing, failure fields on error, choices when several were found', () => {
    expect(importJson({ ...base, status: 'pushing', pushPercent: 75 }, urls)).toMatchObject({
      push_percent: 75,
      import_percent: 42,
    });
    const failed = importJson({ ...base, status: 'error', failedStep: 'raw', errorMessage: 'gone' }, urls);
    expect(failed).toMatchObject({ failed_step: 'raw', error_message: 'gone' });
    expect(failed).not.toHaveProperty('import_percent');
    expect(failed).not.toHaveProperty('push_percent');
    const complete = importJson({ ...base, status: 'complete' }, urls);
    expect(complete).not.toHaveProperty('commit_count');
    expect(complete).not.toHaveProperty('failed_step');
    const multiple = importJson(
      {
        ...base,
        vcs: null,
        status: 'detection_found_multiple',
        projectChoices: [
          { vcs: 'tfvc', tfvcProject: 'p0', humanName: 'p0 (tfs)' },
          { vcs: 'git', humanName: 'g' },
        ],
      },
      urls,
    );
    expect(multiple.vcs).toBeNull();
    expect(multiple.project_choices).toEqual([
      { vcs: 'tfvc', tfvc_project: 'p0', human_name: 'p0 (tfs)' },
      { vcs: 'git', human_name: 'g' },
    ]);
    expect(importJson({ ...base, tfvcProject: 'p1' }, urls)).toMatchObject({ tfvc_project: 'p1' });
  });

  it('renders authors and large files', () => {
    expect(
      importAuthorJson({ id: 3, remoteId: 'r', remoteName: 'n', email: 'e@x', name: 'N' }, base, urls),
    ).toEqual({
      id: 3,
      remote_id: 'r',
      remote_name: 'n',
      email: 'e@x',
      name: 'N',
      url: 'https://api.example/api/v3/repos/octocat/socm/import/authors/3',
      import_url: 'https://api.example/api/v3/repos/octocat/socm/import',
    });
    expect(largeFileJson({ refName: 'refs/heads/main', path: 'a', oid: 'o', size: 1 })).toEqual({
      ref_name: 'refs/heads/main',
      path: 'a',
      oid: 'o',
      size: 1,
    });
  });
});

describe('import rules', () => {
  it('shows raw progress while importing, mapping, pushing; push progress while pushing', () => {
    expect(['importing', 'mapping', 'pushing'].every((s) => showsRawProgress(s as Import['status']))).toBe(
      true,
    );
    expect(
      ['detecting', 'complete', 'error', 'auth_failed'].some((s) => showsRawProgress(s as Import['status'])),
    ).toBe(false);
    expect(showsPushProgress('pushing')).toBe(true);
    expect(showsPushProgress('mapping')).toBe(false);
  });

  it('parses since: absent, a non-negative integer, or malformed', () => {
    expect(parseSince(undefined)).toBeUndefined();
    expect(parseSince('')).toBeUndefined();
    expect(parseSince('0')).toBe(0);
    expect(parseSince('42')).toBe(42);
    for (const bad of ['-1', '1.5', '1e3', 'abc', ' 1', '99999999999999999'])
      expect(parseSince(bad), bad).toBeNull();
  });

  it('checks mapped names and emails', () => {
    expect(isAuthorEmail('hubot@github.com')).toBe(true);
    for (const bad of ['', 'no-at', 'a@', '@b', 'a b@c', 'a@b@c', '<a@b>', `${'a'.repeat(250)}@b.com`])
      expect(isAuthorEmail(bad), bad).toBe(false);
    expect(isAuthorName('Hubot the Robot')).toBe(true);
    for (const bad of ['', '  ', 'a <b>', 'a\nb', 'x'.repeat(256)])
      expect(isAuthorName(bad), bad).toBe(false);
  });

  it('finds the stored project choice a client sent back', () => {
    const choices = [
      { vcs: 'tfvc', tfvcProject: 'p0', humanName: 'p0 (tfs)' },
      { vcs: 'subversion', humanName: 'trunk', path: 'proj/trunk' },
    ] as const;
    expect(findProjectChoice(choices, { vcs: 'tfvc', tfvcProject: 'p0', humanName: 'p0 (tfs)' })).toBe(
      choices[0],
    );
    expect(findProjectChoice(choices, { vcs: 'svn', humanName: 'trunk' })).toBe(choices[1]);
    expect(findProjectChoice(choices, { humanName: 'trunk' })).toBe(choices[1]);
    expect(
      findProjectChoice(choices, { vcs: 'tfvc', tfvcProject: 'p1', humanName: 'p0 (tfs)' }),
    ).toBeUndefined();
    expect(findProjectChoice(choices, { vcs: 'cvs', humanName: 'trunk' })).toBeUndefined();
    expect(findProjectChoice(undefined, { humanName: 'trunk' })).toBeUndefined();
  });
});

describe('preview media type', () => {
  it('accepts the vendor’s barred-rock preview with or without +json, among other types', () => {
    const preview = 'application/vnd.github.barred-rock-preview';
    expect(acceptsPreview(preview, 'github', 'barred-rock')).toBe(true);
    expect(acceptsPreview(`${preview}+json`, 'github', 'barred-rock')).toBe(true);
    expect(acceptsPreview(`text/html, ${preview}+json;q=0.5`, 'github', 'barred-rock')).toBe(true);
    expect(acceptsPreview('APPLICATION/VND.GITHUB.BARRED-ROCK-PREVIEW', 'github', 'barred-rock')).toBe(true);
    expect(acceptsPreview(undefined, 'github', 'barred-rock')).toBe(false);
    expect(acceptsPreview('application/vnd.github.v3+json', 'github', 'barred-rock')).toBe(false);
    expect(acceptsPreview(`${preview}x`, 'github', 'barred-rock')).toBe(false);
    expect(acceptsPreview(preview, 'acme', 'barred-rock')).toBe(false);
    expect(acceptsPreview('application/vnd.acme.barred-rock-preview', 'acme', 'barred-rock')).toBe(true);
  });
});

describe('import update builder', () => {
  it('names attributes from its own code, binds values, and always conditions on the attempt', () => {
    process.env.TABLE_NAME ??= 'unit-table';
    const input = importUpdateInput('Octocat', 'Repo', 3, {
      set: { status: 'detecting' },
      remove: ['taskToken'],
      status: 'auth_failed',
      waitingFor: null,
      notPushed: true,
    });
    expect(input.Key).toEqual({ PK: 'REPO#octocat/repo', SK: 'IMPORT' });
    expect(input.ConditionExpression).toBe(
      'attempt = :attempt AND #cstatus = :cstatus AND attribute_not_exists(#cwaiting) AND (attribute_not_exists(ownerPushed) OR ownerPushed <> :cyes)',
    );
    expect(input.UpdateExpression).toBe('SET #s0 = :s0, #s1 = :s1 REMOVE #r0');
    expect(input.ExpressionAttributeNames).toMatchObject({
      '#s0': 'status',
      '#s1': 'updatedAt',
      '#r0': 'taskToken',
    });
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':attempt': 3,
      ':s0': 'detecting',
      ':cstatus': 'auth_failed',
    });
  });
});
