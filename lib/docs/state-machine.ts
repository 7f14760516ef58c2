/**
 * The import workflow as a Mermaid flowchart, drawn from `statemachines/import.asl.json` itself:
 * docs/importing.md's diagram cannot drift from the file Step Functions runs. Normal transitions are
 * solid arrows, Choice branches are labelled, Catch transitions are dotted and named by what they
 * catch.
 */
import { readFileSync } from 'node:fs';

interface AslState {
  readonly Type: string;
  readonly Next?: string;
  readonly Default?: string;
  readonly Choices?: readonly {
    readonly Next: string;
    readonly StringEquals?: string;
    readonly BooleanEquals?: boolean;
  }[];
  readonly Catch?: readonly { readonly ErrorEquals: readonly string[]; readonly Next: string }[];
  readonly Resource?: string;
}
interface Asl {
  readonly StartAt: string;
  readonly States: Readonly<Record<string, AslState>>;
}

export const IMPORT_ASL_PATH = new URL('../../statemachines/import.asl.json', import.meta.url);

const shape = (name: string, state: AslState): string => {
  if (state.Type === 'Choice') return `${name}{${name}}`;
  if (state.Type === 'Succeed' || state.Type === 'Fail') return `${name}([${name}])`;
  if (state.Type === 'Task' && state.Resource?.endsWith('.waitForTaskToken')) return `${name}[/${name}/]`;
  return `${name}[${name}]`;
};

export function stateMachineMermaid(
  asl: Asl = JSON.parse(readFileSync(IMPORT_ASL_PATH, 'utf8')) as Asl,
): string {
  const lines = ['```mermaid', 'flowchart TD', `  start(( )) --> ${asl.StartAt}`];
  for (const [name, state] of Object.entries(asl.States)) {
    lines.push(`  ${shape(name, state)}`);
    for (const choice of state.Choices ?? []) {
      const label = choice.StringEquals ?? String(choice.BooleanEquals);
      lines.push(`  ${name} -->|${label}| ${choice.Next}`);
    }
    if (state.Default) lines.push(`  ${name} -->|otherwise| ${state.Default}`);
    if (state.Next) lines.push(`  ${name} --> ${state.Next}`);
    for (const handler of state.Catch ?? []) {
      const caught = handler.ErrorEquals.includes('States.ALL') ? 'error' : handler.ErrorEquals.join(', ');
      lines.push(`  ${name} -.->|${caught}| ${handler.Next}`);
    }
  }
  lines.push('```');
  return lines.join('\n');
}
