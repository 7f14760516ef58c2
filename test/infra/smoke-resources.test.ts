import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { API_ROUTES } from '#cdk/rest-api';
import { RESOURCES, routeFunction, type StackResource } from '#smoke/resources';
import { type SynthesizedService, synthService } from '#test/synth';

/** The logical ids of the deployment that a name of `lib/smoke/resources.ts` points at. */
function matching(synth: SynthesizedService, resource: StackResource): string[] {
  const prefix = resource.nestedStack === undefined ? '' : `${resource.nestedStack}/`;
  const id = new RegExp(`^${prefix}${resource.logicalId}[0-9A-F]{8}$`);
  return synth.deployment
    .ofType(resource.type)
    .flatMap(([logicalId]) => (id.test(logicalId) ? [logicalId] : []));
}

describe('the resources the smoke check names (lib/smoke/resources.ts)', () => {
  let synth: SynthesizedService;

  beforeAll(() => {
    synth = synthService();
  });
  afterAll(() => synth?.dispose());

  it('each name is exactly one resource of its type in the stack', () => {
    for (const resource of Object.values(RESOURCES)) {
      expect(matching(synth, resource), resource.logicalId).toHaveLength(1);
    }
  });

  it("each API route's function is in the nested stack the name gives", () => {
    for (const route of API_ROUTES) {
      const resource = routeFunction(route);
      expect(synth.deployment.resources[resource.nestedStack ?? '']?.Type).toBe('AWS::CloudFormation::Stack');
      expect(matching(synth, resource), `${route.method} ${route.path}`).toHaveLength(1);
    }
  });
});
