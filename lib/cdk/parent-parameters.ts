import { CfnParameter, type NestedStack } from 'aws-cdk-lib';

/**
 * A parent stack's value as a named parameter of a nested stack, created on first use. Named
 * rather than left to CDK's automatic references: the console shows what crosses the boundary,
 * and the cdk-nag acknowledgements that quote a value (`…:table/<TableName>/index/*`) stay stable.
 */
export function fromParent(stack: NestedStack, name: string, value: string, description: string): string {
  const existing = stack.node.tryFindChild(name);
  if (existing instanceof CfnParameter) return existing.valueAsString;
  const parameter = new CfnParameter(stack, name, { type: 'String', description });
  stack.setParameter(name, value);
  return parameter.valueAsString;
}
