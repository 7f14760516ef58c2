import { describe, expect, it } from 'vitest';
import { SCOPES } from '#domain/scopes';
import { appInputErrors, readAppInput } from '#http/settings/app-form';
import { fieldErrorText, formatDate, lastUsedText, NOTICES, noticeText } from '#http/settings/format';
import { scopeFieldId } from '#http/settings/tokens-views';

const HOUR = 3600_000;
const now = Date.parse('2024-03-10T12:00:00Z');
const ago = (ms: number) => new Date(now - ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('settings wording', () => {
  it('formats dates in UTC, day month year', () => {
    expect(formatDate('2024-03-03T23:59:59Z')).toBe('3 Mar 2024');
    expect(formatDate('2023-12-31T00:00:00Z')).toBe('31 Dec 2023');
    expect(formatDate('not a date')).toBe('not a date');
  });

  it('says when a token was last used, never claiming more recency than the hourly record allows', () => {
    expect(lastUsedText(null, now)).toBe('Never used');
    expect(lastUsedText(ago(59 * 60_000), now)).toBe('Within the last hour');
    expect(lastUsedText(ago(HOUR), now)).toBe('Within the last day');
    expect(lastUsedText(ago(23 * HOUR), now)).toBe('Within the last day');
    expect(lastUsedText(ago(6 * 24 * HOUR), now)).toBe('Within the last week');
    expect(lastUsedText(ago(20 * 24 * HOUR), now)).toBe('Within the last month');
    expect(lastUsedText('2023-01-05T10:00:00Z', now)).toBe('Last used on 5 Jan 2023');
  });

  it('shows only the fixed notices', () => {
    expect(noticeText('token-deleted')).toBe(NOTICES['token-deleted']);
    expect(noticeText('<b>hi</b>')).toBeUndefined();
    expect(noticeText('toString')).toBeUndefined();
    expect(noticeText(undefined)).toBeUndefined();
  });

  it('turns GitHub validation errors into sentences', () => {
    expect(fieldErrorText({ field: 'note', code: 'missing_field' })).toBe('Note can’t be blank.');
    expect(fieldErrorText({ field: 'note', code: 'already_exists' })).toContain('already have a token');
    expect(fieldErrorText({ field: 'url', code: 'invalid' })).toMatch(/^Homepage URL must be an absolute/);
    expect(fieldErrorText({ field: 'scopes', code: 'custom', message: 'scopes are invalid: x' })).toBe(
      'Scopes: scopes are invalid: x',
    );
  });

  it('gives every scope checkbox a distinct id', () => {
    const ids = Object.keys(SCOPES).map(scopeFieldId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(scopeFieldId('user:email')).toBe('scope-user-email');
    for (const id of ids) expect(id).toMatch(/^[a-z_-]+$/);
  });
});

describe('application registration form', () => {
  const form = (fields: Record<string, string>) => readAppInput(new URLSearchParams(fields));

  it('accepts a name and two absolute http(s) URLs, trimmed', () => {
    const input = form({
      name: ' Tool ',
      url: 'https://tool.example',
      callback_url: 'http://localhost:8080/cb',
    });
    expect(input).toEqual({
      name: 'Tool',
      url: 'https://tool.example',
      callbackUrl: 'http://localhost:8080/cb',
      expireUserTokens: false,
    });
    expect(appInputErrors(input)).toEqual([]);
  });

  it('reads the "Expire user authorization tokens" checkbox: sent means on', () => {
    const base = { name: 'Tool', url: 'https://tool.example', callback_url: 'https://tool.example/cb' };
    expect(form({ ...base, expire_user_tokens: 'on' }).expireUserTokens).toBe(true);
    expect(form(base).expireUserTokens).toBe(false);
  });

  it('reports each bad field once, in form order', () => {
    const errors = appInputErrors(
      form({ name: '', url: 'javascript:alert(1)', callback_url: 'https://a.example/cb#x' }),
    );
    expect(errors.map((e) => [e.field, e.code])).toEqual([
      ['name', 'missing_field'],
      ['url', 'invalid'],
      ['callback_url', 'invalid'],
    ]);
    expect(
      appInputErrors(form({ name: 'x'.repeat(256), url: 'https://a.example', callback_url: '' })).map((e) => [
        e.field,
        e.code,
      ]),
    ).toEqual([
      ['name', 'invalid'],
      ['callback_url', 'missing_field'],
    ]);
    expect(
      appInputErrors(
        form({
          name: 'x',
          url: `https://a.example/${'p'.repeat(2048)}`,
          callback_url: 'https://u:p@a.example/',
        }),
      ).map((e) => e.field),
    ).toEqual(['url', 'callback_url']);
  });
});
