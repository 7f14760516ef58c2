import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { composeReport } from '#domain/import-report';
import { SYNC_OFF } from '#domain/import-sync';
import { IMPORT_STATUSES, type Import, type ImportStatus, statusText } from '#domain/imports';
import { LIVE_SCRIPT, LIVE_SCRIPT_HASH } from '#http/import-page/live-script';
import { formatBytes } from '#http/import-page/report-words';
import {
  AUTHORS_SHOWN,
  type ImportPageData,
  importPage,
  isFinalStatus,
  statusExplanation,
  stepViews,
} from '#http/import-page/views';
import { securityHeaders, type WebReply, type WebRequest } from '#http/middleware/web-stack';
import { page } from '#shared/page-layout';

const HOSTILE = '<img src=x onerror=alert(1)>';
const request = {
  csrf: 'csrf-token-1',
  method: 'GET',
  form: new URLSearchParams(),
  query: {},
} as unknown as WebRequest;
const repo = { owner: 'octocat', repo: 'hello' };

const importOf = (changes: Partial<Import> = {}): Import => ({
  ownerLogin: 'octocat',
  repoName: 'hello',
  attempt: 1,
  importId: 7,
  vcs: 'git',
  vcsUrl: 'https://example.com/hello.git',
  useLfs: 'undecided',
  status: 'importing',
  commitCount: 1234,
  percent: 42,
  pushPercent: null,
  hasLargeFiles: false,
  largeFilesCount: 0,
  largeFilesSize: 0,
  authorsCount: 1,
  hasCredentials: false,
  ownerPushed: false,
  createdAt: '2024-01-01T00:00:00Z',
  updatedAt: '2024-01-01T00:00:00Z',
  ...changes,
});

const data = (record: Import, extra: Partial<ImportPageData> = {}): ImportPageData => ({
  repo,
  record,
  authors: { items: [], total: 0 },
  authorsPage: { page: 1, perPage: AUTHORS_SHOWN, perPageGiven: false },
  largeFiles: [],
  report: composeReport(record, undefined, []),
  revisionCount: 0,
  sync: SYNC_OFF,
  ...extra,
});

/** The whole document as the web stack serves it. */
function rendered(reply: WebReply): string {
  if ('location' in reply || 'download' in reply || 'json' in reply) throw new Error('not a page');
  return page(reply.title, { login: 'octocat', csrf: request.csrf }, reply.body).toString();
}

describe('import progress page view', () => {
  it('shows hostile names from the origin as text, everywhere they appear', () => {
    const record = importOf({
      status: 'error',
      failedStep: 'raw',
      errorMessage: HOSTILE,
      vcsUrl: `https://example.com/${HOSTILE}`,
      hasLargeFiles: true,
      largeFilesCount: 1,
      largeFilesSize: 200_000_000,
    });
    const html = rendered(
      importPage(
        request,
        data(record, {
          authors: {
            total: 1,
            items: [
              {
                id: 1,
                remoteId: `${HOSTILE} <x@y>`,
                remoteName: HOSTILE,
                name: HOSTILE,
                email: `"${HOSTILE}"@x`,
              },
            ],
          },
          largeFiles: [
            { refName: `refs/heads/${HOSTILE}`, path: HOSTILE, oid: 'a'.repeat(40), size: 200_000_000 },
          ],
        }),
      ),
    );
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;img src=x onerror=alert(1)&gt;');
    // In attributes (the form's prefilled values) the quotes cannot end the attribute either.
    expect(html).toContain('value="&quot;&lt;img src=x onerror=alert(1)&gt;&quot;@x"');
  });

  it.each(IMPORT_STATUSES.map((status) => [status]))(
    'explains the status %s in words',
    (status: ImportStatus) => {
      const record = importOf({
        status,
        ...(status === 'error' ? { failedStep: 'push' as const, errorMessage: 'The origin hung up' } : {}),
        ...(status === 'detection_found_multiple'
          ? {
              projectChoices: [
                { vcs: 'git' as const, humanName: 'first' },
                { vcs: 'git' as const, humanName: 'second' },
              ],
            }
          : {}),
      });
      const html = rendered(importPage(request, data(record)));
      const explanation = statusExplanation(record, repo);
      expect(explanation.length).toBeGreaterThan(20);
      expect(html).toContain(statusText(status));
      expect(html).toContain(explanation);
      expect(html).toContain(`data-final="${isFinalStatus(status)}"`);
      if (status === 'error') {
        expect(explanation).toContain('push step');
        expect(html).toContain('The origin hung up');
      }
      const credentials = status === 'auth_failed' || status === 'detection_needs_auth';
      expect(html.includes('name="vcs_password"')).toBe(credentials);
      expect(html.includes('autocomplete="current-password"')).toBe(credentials);
      expect(html.includes('Choose a project')).toBe(status === 'detection_found_multiple');
      // Every form carries the CSRF token; the status is announced politely.
      for (const form of html.matchAll(/<form method="post"[\s\S]*?<\/form>/g))
        expect(form[0]).toContain('name="_csrf" value="csrf-token-1"');
      expect(html).toMatch(/id="import-status"[^>]*role="status"[^>]*aria-live="polite"/);
    },
  );

  it('stops the live updates only for a final status, and offers a refresh link without JavaScript until then', () => {
    expect(IMPORT_STATUSES.filter(isFinalStatus)).toEqual(['complete', 'error', 'detection_found_nothing']);
    expect(rendered(importPage(request, data(importOf())))).toContain(
      '<noscript><p><a href="/octocat/hello/import">Refresh</a>',
    );
    expect(rendered(importPage(request, data(importOf({ status: 'complete' }))))).not.toContain('<noscript>');
  });

  it('draws one bar per step from the status and the recorded progress', () => {
    const importing = stepViews(importOf());
    expect(importing.map((step) => step.state)).toEqual(['done', 'running', 'pending', 'pending']);
    expect(importing[1]).toMatchObject({ value: 42, text: '42%, 1,234 commits' });
    const pushing = stepViews(importOf({ status: 'pushing', pushPercent: 70 }));
    expect(pushing.map((step) => step.state)).toEqual(['done', 'done', 'done', 'running']);
    expect(pushing[1]?.text).toBe('Done, 1,234 commits');
    expect(pushing[3]?.value).toBe(70);
    expect(stepViews(importOf({ status: 'detecting', percent: null, commitCount: null }))[0]).toMatchObject({
      state: 'running',
      value: null,
    });
    expect(stepViews(importOf({ status: 'error', failedStep: 'rewrite' })).map((step) => step.state)).toEqual(
      ['done', 'done', 'failed', 'pending'],
    );
    expect(stepViews(importOf({ status: 'auth_failed' }))[1]?.state).toBe('waiting');
    expect(stepViews(importOf({ waitingFor: 'lfs_choice' }))[1]?.text).toContain('large files');
    expect(stepViews(importOf({ status: 'complete' })).every((step) => step.value === 100)).toBe(true);
    const html = rendered(importPage(request, data(importOf())));
    expect(html).toContain('<label for="progress-raw">');
    expect(html).toMatch(/<progress id="progress-raw" max="100" value="42"/);
    expect(html).toMatch(/<progress id="progress-rewrite" max="100" value="0"/);
  });

  it('shows the large files and the LFS form with the current choice only when there are large files', () => {
    const none = rendered(importPage(request, data(importOf())));
    expect(none).not.toContain('name="use_lfs"');
    const record = importOf({
      hasLargeFiles: true,
      largeFilesCount: 1,
      largeFilesSize: 104_857_600,
      useLfs: 'opt_out',
    });
    const html = rendered(
      importPage(
        request,
        data(record, {
          largeFiles: [
            { refName: 'refs/heads/main', path: 'big.bin', oid: 'b'.repeat(40), size: 104_857_600 },
          ],
        }),
      ),
    );
    expect(html).toContain('big.bin');
    expect(html).toContain('104.9 MB');
    expect(html).toContain('remove large files from the history');
    expect(html).toMatch(/id="use-lfs-opt_out"[^>]*checked/);
    expect(html).not.toMatch(/id="use-lfs-opt_in"[^>]*checked/);
    expect(formatBytes(999)).toBe('999 bytes');
    expect(formatBytes(1_500_000_000)).toBe('1.5 GB');
  });

  it('gives each author form labelled fields and a button named after the author', () => {
    const html = rendered(
      importPage(
        request,
        data(importOf(), {
          authors: {
            items: [{ id: 3, remoteId: 'Jane <j@x>', remoteName: 'Jane', name: 'Jane', email: 'j@x' }],
            total: 1,
          },
        }),
      ),
    );
    expect(html).toContain('action="/octocat/hello/import/authors/3"');
    expect(html).toContain(
      '<label for="author-3-name">Name<span class="visually-hidden"> for Jane</span></label>',
    );
    expect(html).toContain('<input type="email" id="author-3-email" name="email" value="j@x"');
    expect(html).toContain('Map<span class="visually-hidden"> Jane</span></button>');
    expect(html).toContain('<th scope="col">Author in the origin</th>');
  });
});

describe('the live script and the CSP', () => {
  it('serves exactly the script the CSP hash allows, and only on the progress page', () => {
    const reply = importPage(request, data(importOf()));
    if ('location' in reply) throw new Error('a redirect');
    const html = rendered(reply);
    const scripts = [...html.matchAll(/<script>([\s\S]*?)<\/script>/g)].map((match) => match[1] ?? '');
    expect(scripts).toEqual([LIVE_SCRIPT]);
    const served = `'sha256-${createHash('sha256')
      .update(scripts[0] ?? '')
      .digest('base64')}'`;
    expect(served).toBe(LIVE_SCRIPT_HASH);
    const csp = securityHeaders([], reply.scriptHashes)['Content-Security-Policy'];
    expect(csp).toContain(`script-src ${served};`);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe-inline');
    const plain = securityHeaders()['Content-Security-Policy'];
    expect(plain).not.toContain('script-src');
    expect(plain).not.toContain('connect-src');
  });

  it('never writes markup as a string and polls the page itself', () => {
    expect(LIVE_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|eval\(/);
    expect(LIVE_SCRIPT).toContain("fetch(location.href, { credentials: 'same-origin'");
    expect(LIVE_SCRIPT).toContain('DOMParser');
    expect(LIVE_SCRIPT).toContain('replaceWith');
  });
});
