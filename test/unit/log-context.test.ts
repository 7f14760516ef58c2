import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ENV } from '#shared/config';

let log: typeof import('#shared/log');
beforeAll(async () => {
  process.env[ENV.logLevel] = 'info';
  // As Lambda sets it: Powertools counts cold starts only for on-demand environments.
  process.env.AWS_LAMBDA_INITIALIZATION_TYPE = 'on-demand';
  vi.resetModules();
  log = await import('#shared/log');
});
afterEach(() => vi.restoreAllMocks());
afterAll(() => {
  delete process.env.AWS_LAMBDA_INITIALIZATION_TYPE;
});

const contextOf = (id: string) =>
  ({
    functionName: 'GetUser',
    functionVersion: '$LATEST',
    invokedFunctionArn: 'arn:aws:lambda:us-east-1:000000000000:function:GetUser',
    memoryLimitInMB: '512',
    awsRequestId: `lambda-${id}`,
  }) as Context;

/** The JSON records the logger wrote (errors go to standard error) while `act` ran. */
async function records(act: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: string[] = [];
  for (const stream of [process.stdout, process.stderr])
    vi.spyOn(stream, 'write').mockImplementation((chunk) => {
      lines.push(String(chunk));
      return true;
    });
  await act();
  vi.restoreAllMocks();
  return lines
    .flatMap((chunk) => chunk.split('\n'))
    .filter(Boolean)
    .map((line) => JSON.parse(line));
}

describe('the log context of an invocation', () => {
  it('is the invocation of the record: its request ids and cold start, also when an invocation before it wrote nothing', async () => {
    // As the stacks do: the error mapper, used after `logContext`, logs an escaped error and answers.
    const handler = middy<{ say: boolean; fail?: boolean; requestContext: { requestId: string } }, string>()
      .use(log.logContext())
      .use({
        onError: (request) => {
          log.logUnhandled('users/get', request.context.awsRequestId, request.error);
          request.response = 'error';
        },
      })
      .handler(async (event) => {
        if (event.fail) throw new Error('boom');
        if (event.say) log.log('info', 'said');
        return 'ok';
      });
    const invoke = (id: string, say: boolean, fail = false) =>
      handler({ say, fail, requestContext: { requestId: `gateway-${id}` } } as never, contextOf(id));

    const [cold] = await records(() => invoke('a', true));
    expect(cold).toMatchObject({
      message: 'said',
      cold_start: true,
      function_request_id: 'lambda-a',
      correlation_id: 'gateway-a',
    });
    expect(await records(() => invoke('b', false))).toEqual([]);
    const [warm] = await records(() => invoke('c', true));
    expect(warm).toMatchObject({
      message: 'said',
      cold_start: false,
      function_name: 'GetUser',
      function_request_id: 'lambda-c',
      correlation_id: 'gateway-c',
    });
    // A record written after the invocation (the local stack's other servers share the process) is not its.
    const [outside] = await records(async () => log.log('info', 'outside'));
    expect(outside?.correlation_id).toBeUndefined();
    // Unhandled errors carry it too.
    const [unhandled] = await records(() => invoke('d', false, true));
    expect(unhandled).toMatchObject({
      message: 'unhandled error',
      function_request_id: 'lambda-d',
      correlation_id: 'gateway-d',
    });
  });
});
