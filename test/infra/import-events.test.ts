import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '#cdk/rest-api';
import { IMPORT_EVENT_SOURCE } from '#shared/import-events';
import { routeId } from '#shared/routes';
import { SECURITY_EVENT_SOURCE } from '#shared/security-events';
import type { CfnResource } from '#test/deployment';
import { type SynthesizedService, synthService } from '#test/synth';

interface Statement {
  readonly Action: string | string[];
  readonly Resource?: unknown;
  readonly Condition?: Record<string, Record<string, unknown>>;
}

const actionsOf = (statement: Statement): string[] =>
  Array.isArray(statement.Action) ? statement.Action : [statement.Action];

describe('import events in the service stack', () => {
  let synth: SynthesizedService;
  let resources: Readonly<Record<string, CfnResource>>;
  beforeAll(() => {
    synth = synthService();
    resources = synth.deployment.resources;
  });
  afterAll(() => synth?.dispose());

  /** The functions whose role may put events of `source`, and every statement that lets it. */
  function publishers(source: string = IMPORT_EVENT_SOURCE): {
    functions: Set<string>;
    statements: Statement[];
  } {
    const roles = new Set<string>();
    const statements: Statement[] = [];
    for (const resource of Object.values(resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      const found = (resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement.filter(
        (statement) =>
          actionsOf(statement).some((action) => action.startsWith('events:')) &&
          JSON.stringify(statement.Condition ?? {}).includes(source),
      );
      if (found.length === 0) continue;
      statements.push(...found);
      for (const role of resource.Properties.Roles as { Ref: string }[]) roles.add(role.Ref);
    }
    const functions = new Set(
      Object.entries(resources)
        .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
        .filter(([, resource]) => roles.has(resource.Properties.Role?.['Fn::GetAtt']?.[0]))
        .map(([id]) => id),
    );
    return { functions, statements };
  }

  it('lets exactly the functions that write import statuses put events: the steps, the scheduler, the routes that drive imports', () => {
    const steps = [...synth.stack.importWorkflow.functions.values()].map((fn) => synth.logicalId(fn));
    const routes = API_ROUTES.filter((route) => route.uses?.includes('import-workflow')).map((route) => {
      const fn = synth.stack.restApi.functions.get(routeId(route));
      if (!fn) throw new Error(`no function for ${route.handler}`);
      return synth.logicalId(fn);
    });
    const scheduler = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
      .filter(([, resource]) =>
        JSON.stringify(resource.Properties.ImageConfig ?? {}).includes('start-due-syncs'),
      )
      .map(([id]) => id);
    expect(scheduler).toHaveLength(1);
    expect(routes.length).toBeGreaterThan(0);
    expect([...publishers().functions].sort()).toEqual([...steps, ...routes, ...scheduler].sort());
  });

  it('grants only PutEvents, on the default bus, for the service’s own sources', () => {
    for (const source of [IMPORT_EVENT_SOURCE, SECURITY_EVENT_SOURCE]) {
      const { statements } = publishers(source);
      expect(statements.length).toBeGreaterThan(0);
      for (const statement of statements) {
        expect(actionsOf(statement)).toEqual(['events:PutEvents']);
        expect(JSON.stringify(statement.Resource)).toMatch(/:event-bus\/default"\]\]\}$/);
        expect(statement.Condition).toEqual({ StringEquals: { 'events:source': source } });
      }
    }
    // No statement lets a function put events of any other source.
    for (const resource of Object.values(resources)) {
      if (resource.Type !== 'AWS::IAM::Policy') continue;
      for (const statement of (resource.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
        if (actionsOf(statement).some((action) => action.startsWith('events:')))
          expect([IMPORT_EVENT_SOURCE, SECURITY_EVENT_SOURCE]).toContain(
            statement.Condition?.StringEquals?.['events:source'],
          );
    }
  });

  it('lets every route function, every workflow step and the scheduler put security events', () => {
    const lambdas = Object.entries(resources)
      .filter(([, resource]) => resource.Type === 'AWS::Lambda::Function')
      .map(([id]) => id);
    const routes = API_ROUTES.map((route) => {
      const fn = synth.stack.restApi.functions.get(routeId(route));
      if (!fn) throw new Error(`no function for ${route.handler}`);
      return synth.logicalId(fn);
    });
    const steps = [...synth.stack.importWorkflow.functions.values()].map((fn) => synth.logicalId(fn));
    const { functions } = publishers(SECURITY_EVENT_SOURCE);
    for (const id of [...routes, ...steps]) expect(functions).toContain(id);
    expect(lambdas.filter((id) => !functions.has(id)).length).toBeGreaterThan(0);
  });
});
