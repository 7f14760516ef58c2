import { describe, expect, it } from 'vitest';
import { pollRequest } from '#data/device-codes';
import {
  canonicalUserCode,
  entryWindow,
  entryWindowEnd,
  hashDeviceSecret,
  newDeviceCode,
  newUserCode,
  USER_CODE_ALPHABET,
} from '#domain/device-codes';

describe('user codes', () => {
  it('are XXXX-XXXX over twenty consonants without look-alikes', () => {
    for (let i = 0; i < 200; i++)
      expect(newUserCode()).toMatch(/^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    expect(USER_CODE_ALPHABET).not.toMatch(/[AEIOUY0-9]/);
  });

  it('are read whatever the case, spaces or hyphen, and anything else is not a code', () => {
    expect(canonicalUserCode('wdjb-mjht')).toBe('WDJB-MJHT');
    expect(canonicalUserCode(' WDJB MJHT ')).toBe('WDJB-MJHT');
    expect(canonicalUserCode('WDJBMJHT')).toBe('WDJB-MJHT');
    for (const typed of ['', 'WDJB-MJH', 'WDJB-MJHTX', 'WDJB-MJH0', 'AEIO-UBCD', 'WDJB_MJHT'])
      expect(canonicalUserCode(typed)).toBeUndefined();
  });
});

describe('device codes', () => {
  it('are 160 random bits in hex, stored as SHA-256', () => {
    const code = newDeviceCode();
    expect(code).toMatch(/^[0-9a-f]{40}$/);
    expect(hashDeviceSecret(code)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashDeviceSecret(code)).not.toContain(code);
  });
});

describe('code entry windows', () => {
  it('are fixed 15-minute windows', () => {
    const at = Date.UTC(2026, 0, 1, 10, 7);
    expect(entryWindowEnd(entryWindow(at)) * 1000).toBe(Date.UTC(2026, 0, 1, 10, 15));
  });
});

describe('the poll request', () => {
  it('is one conditional UpdateItem that moves the next poll time on and returns the item either way', () => {
    process.env.TABLE_NAME ??= 'unit';
    const request = pollRequest('h', 'client', 1_000_000);
    expect(request.UpdateExpression).toBe('SET #next = :nowMs + #interval');
    expect(request.ConditionExpression).toContain('#next <= :nowMs');
    expect(request.ConditionExpression).toContain('#clientId = :clientId');
    expect(request.ConditionExpression).toContain('attribute_not_exists(#exchangedAt)');
    expect(request.ExpressionAttributeValues).toMatchObject({
      ':nowMs': 1_000_000,
      ':nowS': 1000,
      ':clientId': 'client',
    });
    expect(request.ReturnValues).toBe('ALL_NEW');
    expect(request.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
  });
});
