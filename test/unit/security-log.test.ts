import { describe, expect, it } from 'vitest';
import {
  failedSignInBucket,
  SECURITY_EVENTS,
  SECURITY_LOG_SECONDS,
  type SecurityEvent,
  securityEventExpiry,
  securityEventId,
  securityEventJson,
  securityLogCursor,
  securityLogPosition,
  storedSecurityEvent,
} from '#domain/security-log';
import { busReachable } from '#services/event-bus';

const event: SecurityEvent = {
  id: '3a129521-6193-5aae-ad9f-ed4d910b5554',
  login: 'mona',
  kind: 'tokenCreated',
  actor: { kind: 'app', login: 'mona', clientId: 'abc123', appName: 'Agent' },
  origin: { address: '192.0.2.1', userAgent: 'curl/8' },
  createdAt: '2026-12-02T17:44:44.212Z',
  subject: { token: { id: 42, note: 'ci', lastEight: 'Cy2w7mb1' } },
};

describe('security log catalogue', () => {
  it('names every action <resource>.<verb>, each once', () => {
    const actions = Object.values(SECURITY_EVENTS).map((entry) => entry.action);
    expect(new Set(actions).size).toBe(actions.length);
    for (const action of actions) expect(action).toMatch(/^[a-z_]+\.[a-z_]+$/);
  });
});

describe('securityEventId', () => {
  it('is the same for the same action, whatever the case of the login, and differs by kind and parts', () => {
    const id = securityEventId('followStarted', 'Mona', [7]);
    expect(securityEventId('followStarted', 'mona', [7])).toBe(id);
    expect(securityEventId('cutOver', 'mona', [7])).not.toBe(id);
    expect(securityEventId('followStarted', 'mona', [8])).not.toBe(id);
    expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe('expiry and stored form', () => {
  it('keeps an event 90 days from its time, with its action name', () => {
    expect(securityEventExpiry(event.createdAt) - Date.parse(event.createdAt) / 1000).toBeCloseTo(
      SECURITY_LOG_SECONDS,
      0,
    );
    expect(storedSecurityEvent(event)).toMatchObject({ action: 'oauth_access.create', event });
  });

  it('files failed sign-ins by the minute', () => {
    expect(failedSignInBucket(Date.parse('2026-12-02T17:44:59.999Z'))).toBe(
      failedSignInBucket(Date.parse('2026-12-02T17:44:00.000Z')),
    );
    expect(failedSignInBucket(Date.parse('2026-12-02T17:45:00.000Z'))).toBe(
      failedSignInBucket(Date.parse('2026-12-02T17:44:00.000Z')) + 1,
    );
  });
});

describe('cursor', () => {
  it('round-trips an event position and refuses anything else', () => {
    const position = `${event.createdAt}#${event.id}`;
    expect(securityLogPosition(securityLogCursor(position))).toBe(position);
    expect(securityLogPosition(securityLogCursor('2026-12-02T17:44:44.212Z#x'))).toBeUndefined();
    expect(securityLogPosition(securityLogCursor(`SECLOGID#${event.id}`))).toBeUndefined();
    expect(securityLogPosition('not base64url!')).toBeUndefined();
    expect(securityLogPosition('a'.repeat(200))).toBeUndefined();
  });
});

describe('securityEventJson', () => {
  it("names an application's actor and the token without the token itself", () => {
    expect(securityEventJson(event)).toEqual({
      id: event.id,
      action: 'oauth_access.create',
      user: 'mona',
      actor: 'mona',
      actor_type: 'OauthApplication',
      actor_application: { client_id: 'abc123', name: 'Agent' },
      actor_ip: '192.0.2.1',
      user_agent: 'curl/8',
      created_at: event.createdAt,
      '@timestamp': Date.parse(event.createdAt),
      token: { id: 42, note: 'ci', last_eight: 'Cy2w7mb1' },
    });
  });

  it('has no login for an administrator or someone not signed in', () => {
    for (const kind of ['admin', 'anonymous', 'service'] as const)
      expect(securityEventJson({ ...event, actor: { kind } })).toMatchObject({
        actor: null,
        actor_type: kind,
        actor_application: null,
      });
  });
});

describe('busReachable', () => {
  it('is true in Lambda and in the Git front end on ECS (each names its runtime), and where the local bus is set', () => {
    expect(busReachable({ runtime: 'AWS_Lambda_nodejs22.x' })).toBe(true);
    // ECS sets no Lambda variable: the front end's failed sign-ins were in the log only.
    expect(busReachable({ runtime: 'AWS_ECS_FARGATE' })).toBe(true);
    expect(busReachable({ endpoint: 'http://127.0.0.1:4010' })).toBe(true);
    // The admin CLI on a deployed table, a test of the data alone: nothing to send to.
    expect(busReachable({})).toBe(false);
  });
});
