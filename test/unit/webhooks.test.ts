import { Webhooks } from '@octokit/webhooks';
import { describe, expect, it } from 'vitest';
import {
  boundedBody,
  deliveryBody,
  deliveryHeaders,
  MAX_RECORDED_BODY_BYTES,
  statusOfCode,
  subscribes,
} from '#domain/webhooks';

const verify = (secret: string, body: string, signature: string) =>
  new Webhooks({ secret }).verify(body, signature);

describe('webhook deliveries (domain/webhooks.ts)', () => {
  it('signs the exact body GitHub-style, JSON or form, and never puts the secret in a header', async () => {
    const payload = { zen: 'Design for failure.', hook_id: 7, text: 'ä & = +' };
    for (const contentType of ['json', 'form'] as const) {
      const body = deliveryBody(contentType, payload);
      const headers = deliveryHeaders({
        hookId: 7,
        guid: 'g',
        event: 'ping',
        contentType,
        body,
        secret: 's3cret',
      });
      expect(await verify('s3cret', body, headers['X-Hub-Signature-256'] ?? '')).toBe(true);
      expect(await verify('other', body, headers['X-Hub-Signature-256'] ?? '')).toBe(false);
      expect(JSON.stringify(headers)).not.toContain('s3cret');
    }
    expect(deliveryBody('form', payload)).toBe(`payload=${encodeURIComponent(JSON.stringify(payload))}`);
    expect(new URLSearchParams(deliveryBody('form', payload)).get('payload')).toBe(JSON.stringify(payload));
    const unsigned = deliveryHeaders({
      hookId: 255,
      guid: 'g',
      event: 'ping',
      contentType: 'json',
      body: '{}',
    });
    expect(unsigned).not.toHaveProperty('X-Hub-Signature-256');
    expect(unsigned['User-Agent']).toBe('GitHub-Hookshot/00000ff');
  });

  it('says OK for 2xx only, sends ping whatever the events, and bounds recorded bodies', () => {
    expect([200, 204, 302, 500].map(statusOfCode)).toEqual([
      'OK',
      'OK',
      'Invalid HTTP Response: 302',
      'Invalid HTTP Response: 500',
    ]);
    expect(subscribes({ events: ['push'], active: true }, 'ping')).toBe(true);
    expect(subscribes({ events: ['push'], active: true }, 'repository_import')).toBe(false);
    expect(subscribes({ events: ['*'], active: true }, 'repository_import')).toBe(true);
    expect(subscribes({ events: ['repository_import'], active: false }, 'repository_import')).toBe(false);
    expect(Buffer.byteLength(boundedBody('x'.repeat(MAX_RECORDED_BODY_BYTES * 2)))).toBe(
      MAX_RECORDED_BODY_BYTES,
    );
  });
});
