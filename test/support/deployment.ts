import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { CfnElement, NestedStack, Stack } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';

/** A CloudFormation resource as a template holds it (untyped JSON, read by path in tests). */
export interface CfnResource {
  readonly Type: string;
  // biome-ignore lint/suspicious/noExplicitAny: CloudFormation templates are untyped JSON, read by path
  readonly Properties: Record<string, any>;
  readonly Metadata?: Record<string, unknown>;
  readonly DependsOn?: string | string[];
  readonly DeletionPolicy?: string;
  readonly UpdateReplacePolicy?: string;
}

export interface CfnTemplate {
  readonly Resources: Record<string, CfnResource>;
  readonly Parameters?: Record<string, unknown>;
  readonly Outputs?: Record<string, { readonly Value: unknown; readonly Description?: string }>;
}

export interface DeployedStack {
  /** `''` for the parent stack; for a nested stack its logical id in its parent (`ImportRoutes`), nesting joined with `/`. */
  readonly path: string;
  /** The template file in the cloud assembly. */
  readonly file: string;
  readonly template: CfnTemplate;
}

/**
 * A synthesized stack with every nested stack, as CloudFormation deploys them: one per template.
 * `resources` is the whole deployment as if it were one template, so that assertions written
 * against one template keep checking the same facts:
 *
 * - keys are logical ids, those of nested stacks prefixed with the stack's path (`ImportRoutes/ImportsStart1A2B3C4D`);
 * - references are followed across stacks: a nested stack's `Ref` to one of its parameters becomes
 *   the value its parent passes (followed further up), and a parent's `Fn::GetAtt` of a nested
 *   stack's `Outputs.X` becomes that output's value; `Ref`/`Fn::GetAtt` of a nested stack's own
 *   resources name them by prefixed id. A function's `TABLE_NAME` in a nested stack thus reads
 *   `{ Ref: <table id> }`, exactly as it did in one template.
 */
export interface Deployment {
  /** The parent first, then nested stacks depth first. */
  readonly stacks: readonly DeployedStack[];
  readonly resources: Readonly<Record<string, CfnResource>>;
  /** Resources of the given type across all stacks, by prefixed id. */
  ofType(type: string): [string, CfnResource][];
}

const qualify = (path: string, logicalId: string): string =>
  path === '' ? logicalId : `${path}/${logicalId}`;

/** The nested template's hash in a CfnStack's TemplateURL (the file asset's id in `<stack>.assets.json`). */
function templateAssetId(resource: CfnResource): string {
  const match = JSON.stringify(resource.Properties.TemplateURL).match(/\/([0-9a-f]{64})\.json"/);
  if (!match?.[1]) throw new Error(`no template asset in ${JSON.stringify(resource.Properties.TemplateURL)}`);
  return match[1];
}

/**
 * Reads a stack's template and, recursively, the templates of its nested stacks from a cloud
 * assembly directory (`cdk synth`'s output, or an in-memory `app.synth()`'s outdir). Nested
 * templates are file assets of the parent: its TemplateURL names the asset, `<stack>.assets.json`
 * the file.
 */
export function loadDeployment(outdir: string, stackName: string): Deployment {
  const read = (file: string): unknown => JSON.parse(readFileSync(join(outdir, file), 'utf8'));
  const assets = read(`${stackName}.assets.json`) as {
    files?: Record<string, { source: { path: string } }>;
  };
  const stacks: DeployedStack[] = [];
  const load = (path: string, file: string): void => {
    const template = read(file) as CfnTemplate;
    stacks.push({ path, file, template });
    for (const [logicalId, resource] of Object.entries(template.Resources)) {
      if (resource.Type !== 'AWS::CloudFormation::Stack') continue;
      const asset = assets.files?.[templateAssetId(resource)];
      if (asset === undefined) throw new Error(`${qualify(path, logicalId)}: its template is not an asset`);
      load(qualify(path, logicalId), asset.source.path);
    }
  };
  load('', `${stackName}.template.json`);

  const byPath = new Map(stacks.map((stack) => [stack.path, stack]));
  const parentOf = (path: string): { stack: DeployedStack; logicalId: string } => {
    const cut = path.lastIndexOf('/');
    const stack = byPath.get(cut < 0 ? '' : path.slice(0, cut)) as DeployedStack;
    return { stack, logicalId: path.slice(cut + 1) };
  };

  const resolve = (stack: DeployedStack, value: unknown): unknown => {
    if (Array.isArray(value)) return value.map((item) => resolve(stack, item));
    if (value === null || typeof value !== 'object') return value;
    const object = value as Record<string, unknown>;
    const keys = Object.keys(object);
    if (keys.length === 1 && typeof object.Ref === 'string') {
      const ref = object.Ref;
      if (ref.startsWith('AWS::')) return value;
      if (stack.template.Resources[ref] !== undefined) return { Ref: qualify(stack.path, ref) };
      if (stack.path !== '' && stack.template.Parameters?.[ref] !== undefined) {
        const parent = parentOf(stack.path);
        const passed = parent.stack.template.Resources[parent.logicalId]?.Properties.Parameters?.[ref];
        if (passed === undefined) throw new Error(`${stack.path}: parameter ${ref} is not passed`);
        return resolve(parent.stack, passed);
      }
      return value;
    }
    if (keys.length === 1 && Array.isArray(object['Fn::GetAtt'])) {
      const [target, attribute] = object['Fn::GetAtt'] as [string, string];
      const resource = stack.template.Resources[target];
      if (resource?.Type === 'AWS::CloudFormation::Stack' && attribute.startsWith('Outputs.')) {
        const nested = byPath.get(qualify(stack.path, target)) as DeployedStack;
        const output = nested.template.Outputs?.[attribute.slice('Outputs.'.length)];
        if (output === undefined) throw new Error(`${nested.path} has no output ${attribute}`);
        return resolve(nested, output.Value);
      }
      if (resource !== undefined) return { 'Fn::GetAtt': [qualify(stack.path, target), attribute] };
      return value;
    }
    return Object.fromEntries(keys.map((key) => [key, resolve(stack, object[key])]));
  };

  const resources: Record<string, CfnResource> = {};
  for (const stack of stacks) {
    for (const [logicalId, resource] of Object.entries(stack.template.Resources)) {
      const dependsOn = resource.DependsOn;
      resources[qualify(stack.path, logicalId)] = {
        ...resource,
        Properties: resolve(stack, resource.Properties ?? {}) as Record<string, unknown>,
        ...(dependsOn === undefined
          ? {}
          : { DependsOn: [dependsOn].flat().map((id) => qualify(stack.path, id)) }),
      };
    }
  }
  return {
    stacks,
    resources,
    ofType: (type) => Object.entries(resources).filter(([, resource]) => resource.Type === type),
  };
}

/** A construct's CloudFormation logical id as `Deployment.resources` keys it (prefixed in nested stacks). */
export function deployedLogicalId(construct: IConstruct): string {
  const resource = construct.node.defaultChild ?? construct;
  if (!CfnElement.isCfnElement(resource))
    throw new Error(`${construct.node.path} has no CloudFormation resource`);
  let stack = Stack.of(resource);
  let id = stack.resolve(resource.logicalId) as string;
  while (NestedStack.isNestedStack(stack)) {
    const nestedResource = stack.nestedStackResource as CfnElement;
    stack = Stack.of(nestedResource);
    id = `${stack.resolve(nestedResource.logicalId) as string}/${id}`;
  }
  return id;
}
