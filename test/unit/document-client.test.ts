import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from 'vitest';
import { documentClientOf } from '#data/client';

describe('the service DocumentClient', () => {
  it("has no SDK logger middleware (it masks every call's input and output for a no-op logger)", () => {
    const plain = new DynamoDBClient({ region: 'us-east-1' });
    // The SDK names it so: if a release renames it, this fails instead of the removal silently doing nothing.
    expect(plain.middlewareStack.identify().some((entry) => entry.startsWith('loggerMiddleware'))).toBe(true);
    const client = documentClientOf(new DynamoDBClient({ region: 'us-east-1' }));
    expect(client.middlewareStack.identify().filter((entry) => /logger/i.test(entry))).toEqual([]);
  });
});
