import { ACCESS_PATTERNS, type Gsi1Key, type Key, type Read } from '#data/keys';
import { ROUTES, type Route, routeId, servedBy } from '#shared/routes';
import { stateMachineMermaid } from './state-machine.ts';

const AUTH_TEXT = {
  none: 'optional',
  'lfs-action': 'optional, or the LFS action token',
  password: 'Basic (password)',
  user: 'password or token',
  app: 'Basic (client_id:secret)',
  web: 'browser session',
  client: 'OAuth client credentials',
  public: 'none (public document)',
  bearer: 'Bearer token',
} as const;

/** Where a route's handler is: its Lambda function's module, or the Git front end's table. */
const handlerText = (route: Route): string =>
  servedBy(route) === 'api'
    ? `\`functions/http/${route.handler}.ts\` (${routeId(route)})`
    : `\`functions/git-server/handlers.ts\` (\`${route.handler}\`, Git front end)`;

/** The route table as Markdown: one row per route-table entry. */
export function routeTableMarkdown(): string {
  const rows = ROUTES.map(
    (route) =>
      `| ${route.method} | \`${route.path}\` | ${AUTH_TEXT[route.auth]} | ${route.scopes.join(', ') || '–'} | ${route.table} | ${handlerText(route)} |`,
  );
  return [
    '| Method | Path | Auth | Scopes | Table | Handler (function) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

const keyText = (key: Key | Gsi1Key): string =>
  'PK' in key ? `${key.PK}, ${key.SK}` : `GSI1PK = ${key.GSI1PK}, GSI1SK = ${key.GSI1SK}`;

function readText(read: Read): string {
  if ('get' in read) return `GetItem \`${keyText(read.get)}\``;
  if ('batchGet' in read)
    return `BatchGetItem ${read.batchGet.map((key) => `\`${keyText(key)}\``).join(' + ')}`;
  if ('update' in read) return `UpdateItem \`${keyText(read.update)}\``;
  if ('write' in read) return read.write.map((key) => `\`${keyText(key)}\``).join(' + ');
  const [pk, sk, pkName, skName] =
    'PK' in read.query
      ? [read.query.PK, read.query.SK, 'PK', 'SK']
      : [read.query.GSI1PK, read.query.GSI1SK, 'GSI1PK', 'GSI1SK'];
  if (read.by === 'partition') return `Query \`${pkName} = ${pk}\``;
  if (read.by === 'key') return `Query \`${pkName} = ${pk} AND ${skName} = ${sk}\``;
  return `Query \`${pkName} = ${pk} AND begins_with(${skName}, '${sk}')\``;
}

/** The access-pattern table, from the key builders' own output (`ACCESS_PATTERNS` in data/keys.ts). */
export function accessPatternTable(): string {
  const rows = ACCESS_PATTERNS.map(
    (p) =>
      `| ${p.pattern} | ${p.index} | ${readText(p.read)}${p.strong ? ', strong' : ''}${p.note ? ` (${p.note})` : ''} |`,
  );
  return ['| Access pattern | Index | Key condition |', '|---|---|---|', ...rows].join('\n');
}

function replaceSection(text: string, name: string, content: string): string {
  const start = `<!-- generated:${name} -->`;
  const end = `<!-- /generated:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`the document lacks the ${start} ... ${end} markers`);
  return `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`;
}

const SECTIONS: Readonly<Record<string, () => string>> = {
  routes: routeTableMarkdown,
  'access-patterns': accessPatternTable,
  'state-machine': () => stateMachineMermaid(),
};

/** A document (docs/api.md, docs/importing.md, docs/data-model.md) with its generated sections brought up to date. */
export function renderGenerated(text: string): string {
  let rendered = text;
  for (const [name, render] of Object.entries(SECTIONS))
    if (rendered.includes(`<!-- generated:${name} -->`)) rendered = replaceSection(rendered, name, render());
  return rendered;
}

/** The documents that carry generated sections: the route table, the state machine, the access patterns. */
export const GENERATED_DOCS = ['docs/api.md', 'docs/importing.md', 'docs/data-model.md'] as const;

/** The names of the generated sections, each of which one document of GENERATED_DOCS carries. */
export const GENERATED_SECTIONS = Object.keys(SECTIONS);
