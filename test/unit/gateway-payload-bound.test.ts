import { describe, expect, it } from 'vitest';
import { payloadBytesAtMost } from '#local/http-server';

const exact = (value: unknown): number => Buffer.byteLength(JSON.stringify(value));

describe("the local API Gateway's payload size bound", () => {
  it('is never below the serialized size, whatever must be escaped', () => {
    const values: unknown[] = [
      '',
      'plain',
      '"\\\n\u0000\u001f\u007f',
      'é€😀',
      '\ud800',
      -1.2345678901234568e-300,
      Number.MAX_SAFE_INTEGER,
      true,
      null,
      [],
      // A hole serializes as null.
      new Array(3),
      { a: undefined, b: () => 1, 'quo"te': '\u0001' },
      { headers: { 'X-Á': ['v1', 'v2'] }, body: '\u0002'.repeat(1000), isBase64Encoded: false },
    ];
    for (const value of values)
      expect(payloadBytesAtMost(value), JSON.stringify(value)).toBeGreaterThanOrEqual(exact(value));
  });

  it('leaves values with their own serialization to the exact count', () => {
    expect(payloadBytesAtMost({ at: new Date(0) })).toBe(Number.POSITIVE_INFINITY);
  });
});
