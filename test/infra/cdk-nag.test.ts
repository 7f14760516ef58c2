import { NestedStack, Validations } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import { AwsSolutionsChecks } from 'cdk-nag';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { type SynthesizedService, synthService } from '#test/synth';

type Report = ReturnType<AwsSolutionsChecks['validate']>;

/**
 * Every acknowledged AwsSolutions rule id in the app, from the metadata `Validations.acknowledge`
 * records. aws-cdk-lib acknowledges rules of its own CloudFormation validator (the VPC flow log's
 * `CloudFormation-Validate::*`); those are not cdk-nag's.
 */
function acknowledgedIds(synth: SynthesizedService): Set<string> {
  const ids = new Set<string>();
  for (const construct of synth.app.node.findAll()) {
    for (const entry of construct.node.metadata) {
      if (entry.type !== Validations.ACKNOWLEDGED_RULES_METADATA_KEY) continue;
      for (const key of Object.keys(entry.data as object)) {
        const id = key.replace(/^annotation::/i, '');
        if (id.startsWith('AwsSolutions-')) ids.add(id);
      }
    }
  }
  return ids;
}

/**
 * The AwsSolutions pack with acknowledgements ignored: what the app would be blamed for. Relies
 * on cdk-nag 3's private `isAcknowledged`; if that ever changes, the comparison below fails loudly.
 */
class UnacknowledgedChecks extends AwsSolutionsChecks {}
Object.defineProperty(UnacknowledgedChecks.prototype, 'isAcknowledged', { value: () => false });

describe('cdk-nag AwsSolutions checks', () => {
  let synth: SynthesizedService;
  let reports: Report[];

  beforeAll(() => {
    // Watch the real plugin: it must run during synthesis, not merely be registered.
    const validate = vi.spyOn(AwsSolutionsChecks.prototype, 'validate');
    try {
      synth = synthService();
      reports = validate.mock.results.map((result) => result.value as Report);
    } finally {
      validate.mockRestore();
    }
  });
  afterAll(() => synth?.dispose());

  it('runs once during synthesis and reports no unacknowledged error or warning', () => {
    expect(reports).toHaveLength(1);
    expect(reports[0]?.violations.map((violation) => `${violation.severity} ${violation.ruleName}`)).toEqual(
      [],
    );
    expect(reports[0]?.success).toBe(true);
  });

  it('leaves no cdk-nag annotation on any stack', () => {
    // cdk-nag 3 reports through the validation plugin, not annotations; this catches a regression
    // to the v2 aspect style, whose findings would land here instead. A nested stack's annotations
    // are reported with its parent's.
    const pattern = Match.stringLikeRegexp('AwsSolutions-.*');
    expect(Annotations.fromStack(synth.stack).findError('*', pattern)).toEqual([]);
    expect(Annotations.fromStack(synth.stack).findWarning('*', pattern)).toEqual([]);
  });

  it('checks the resources of the nested stacks too', () => {
    const nested = synth.app.node.findAll().filter(NestedStack.isNestedStack);
    expect(nested.length).toBe(synth.deployment.stacks.length - 1);
    expect(nested.length).toBeGreaterThan(0);
    // Each nested stack has findings of its own (its roles' wildcards), all acknowledged.
    const checked = new UnacknowledgedChecks();
    for (const stack of nested)
      expect(checked.validateScope(stack).violations.length, stack.node.path).toBeGreaterThan(0);
  });

  it('acknowledges exactly the findings the checks raise, each with its reason in the template', () => {
    const findings = new UnacknowledgedChecks()
      .validateScope(synth.app)
      .violations.map((violation) => violation.ruleName);
    expect(findings.length).toBeGreaterThan(0);
    expect([...acknowledgedIds(synth)].sort()).toEqual([...new Set(findings)].sort());

    // Every stack's template: the parent's and the nested stacks'.
    const recorded = Object.values(synth.deployment.resources).flatMap((resource) => {
      const nag = (resource.Metadata as { cdk_nag?: { rules_to_suppress: { id: string; reason: string }[] } })
        ?.cdk_nag;
      return nag?.rules_to_suppress ?? [];
    });
    const recordedNag = recorded.filter((rule) => rule.id.startsWith('AwsSolutions-'));
    expect(new Set(recordedNag.map((rule) => rule.id))).toEqual(new Set(findings));
    for (const rule of recorded) expect(rule.reason.length, rule.id).toBeGreaterThan(40);
  });
});
