import { Stack } from 'aws-cdk-lib';
import { PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IFunction } from 'aws-cdk-lib/aws-lambda';
import { IMPORT_EVENT_SOURCE } from '#shared/import-events';

/**
 * What a function that writes an import's status needs to publish its import events
 * (`services/import-events.ts`): `events:PutEvents` on the account's default event bus, for the
 * service's own `source` only. The workflow's steps, the sync scheduler and the API functions
 * that drive imports get it.
 */
export const grantPutImportEvents = (fn: IFunction): void => grantPutEvents(fn, IMPORT_EVENT_SOURCE);

/** `events:PutEvents` on the account's default event bus, for events of `source` only. */
export function grantPutEvents(fn: IFunction, source: string): void {
  fn.addToRolePolicy(
    new PolicyStatement({
      actions: ['events:PutEvents'],
      resources: [
        Stack.of(fn).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' }),
      ],
      conditions: { StringEquals: { 'events:source': source } },
    }),
  );
}
