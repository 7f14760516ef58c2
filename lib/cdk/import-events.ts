import { Stack } from 'aws-cdk-lib';
import { type IGrantable, PolicyStatement } from 'aws-cdk-lib/aws-iam';
import type { IConstruct } from 'constructs';
import { IMPORT_EVENT_SOURCE } from '#shared/import-events';

/**
 * What a function that writes an import's status needs to publish its import events
 * (`services/import-events.ts`): `events:PutEvents` on the account's default event bus, for the
 * service's own `source` only. The workflow's steps, the sync scheduler and the API functions
 * that drive imports get it.
 */
export const grantPutImportEvents = (fn: EventPublisher): void => grantPutEvents(fn, IMPORT_EVENT_SOURCE);

/** What publishes: a function, or the role of the Git front end's task. */
export type EventPublisher = IGrantable & IConstruct;

/** `events:PutEvents` on the account's default event bus, for events of `source` only. */
export function grantPutEvents(publisher: EventPublisher, source: string): void {
  publisher.grantPrincipal.addToPrincipalPolicy(
    new PolicyStatement({
      actions: ['events:PutEvents'],
      resources: [
        Stack.of(publisher).formatArn({ service: 'events', resource: 'event-bus', resourceName: 'default' }),
      ],
      conditions: { StringEquals: { 'events:source': source } },
    }),
  );
}
