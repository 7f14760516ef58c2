import { describe, expect, it } from 'vitest';
import {
  canonicalUserCode,
  entryWindow,
  entryWindowEnd,
  hashDeviceSecret,
  newDeviceCode,
  newUserCode,
  PollMemory,
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

describe('PollMemory', () => {
  it('says too soon for a poll within the interval of the same code, and on time after it', () => {
    const polls = new PollMemory(10);
    expect(polls.tooSoon('a', 1_000, 5_000)).toBe(false);
    expect(polls.tooSoon('a', 5_999, 5_000)).toBe(true);
    // Measured from the last poll, the early one included (the client must wait again).
    expect(polls.tooSoon('a', 10_000, 5_000)).toBe(true);
    expect(polls.tooSoon('a', 15_000, 5_000)).toBe(false);
    // Another code has its own clock.
    expect(polls.tooSoon('b', 15_001, 5_000)).toBe(false);
  });

  it('judges by the interval it is given (a grown one after slow_down)', () => {
    const polls = new PollMemory(10);
    polls.tooSoon('a', 0, 5_000);
    expect(polls.tooSoon('a', 6_000, 10_000)).toBe(true);
    expect(polls.tooSoon('a', 16_000, 10_000)).toBe(false);
  });

  it('forgets the least recently polled code past its capacity, and only that one', () => {
    const polls = new PollMemory(2);
    polls.tooSoon('a', 0, 5_000);
    polls.tooSoon('b', 1, 5_000);
    polls.tooSoon('a', 2, 5_000); // a is now the most recent
    polls.tooSoon('c', 3, 5_000); // b is forgotten
    expect(polls.tooSoon('b', 4, 5_000)).toBe(false);
    expect(polls.tooSoon('c', 5, 5_000)).toBe(true);
  });
});
