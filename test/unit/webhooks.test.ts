import { Webhooks } from '@octokit/webhooks';
import { describe, expect, it } from 'vitest';
import {
  boundedBody,
  deliveryBody,
  deliveryHeaders,
  MAX_RECORDED_BODY_BYTES,
  receiverWording,
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

describe('delivery error wording (domain/webhooks.ts receiverWording)', () => {
  it('says "receiver" for the word "origin", and leaves host names, URLs and other words as they are', () => {
    const cases: [string, string][] = [
      [
        'The origin at origin.receiver.lab did not answer in time',
        'The receiver at origin.receiver.lab did not answer in time',
      ],
      [
        'The origin at hooks.origin.lab:8443 closed the connection',
        'The receiver at hooks.origin.lab:8443 closed the connection',
      ],
      ['The origin redirected too many times', 'The receiver redirected too many times'],
      ['Origin timed out. The origin.', 'Receiver timed out. The receiver.'],
      [
        'TLS with my-origin.example failed: Host: origin.lab. is not in the cert',
        'TLS with my-origin.example failed: Host: origin.lab. is not in the cert',
      ],
      ['The host originals.lab could not be resolved', 'The host originals.lab could not be resolved'],
      [
        'No repository at https://origin/x.git or user@origin',
        'No repository at https://origin/x.git or user@origin',
      ],
      ["The origin's certificate expired", "The receiver's certificate expired"],
    ];
    for (const [message, expected] of cases) expect(receiverWording(message), message).toBe(expected);
  });
});
