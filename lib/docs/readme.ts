import { ROUTES, routeId } from '#shared/routes';

const AUTH_TEXT = {
  none: 'optional',
  password: 'Basic (password)',
  user: 'password or token',
  app: 'Basic (client_id:secret)',
  web: 'browser session',
  client: 'OAuth client credentials',
} as const;

/** The route table as Markdown: one row per route-table entry. */
export function routeTableMarkdown(): string {
  const rows = ROUTES.map(
    (route) =>
      `| ${route.method} | \`${route.path}\` | ${AUTH_TEXT[route.auth]} | ${route.scopes.join(', ') || '–'} | ${route.table} | \`functions/http/${route.handler}.ts\` (${routeId(route)}) |`,
  );
  return [
    '| Method | Path | Auth | Scopes | Table | Handler (function) |',
    '|---|---|---|---|---|---|',
    ...rows,
  ].join('\n');
}

/** The access-pattern table of docs/data-model.md (the section under "## Access patterns"). */
export function accessPatternTable(dataModel: string): string {
  const section = dataModel.split(/^## Access patterns\s*$/m)[1] ?? '';
  const table = section.split('\n').filter((line) => line.startsWith('|'));
  if (table.length < 3) throw new Error('docs/data-model.md has no access-pattern table');
  return table.join('\n');
}

function replaceSection(text: string, name: string, content: string): string {
  const start = `<!-- generated:${name} -->`;
  const end = `<!-- /generated:${name} -->`;
  const from = text.indexOf(start);
  const to = text.indexOf(end);
  if (from < 0 || to < from) throw new Error(`README.md lacks the ${start} ... ${end} markers`);
  return `${text.slice(0, from + start.length)}\n${content}\n${text.slice(to)}`;
}

/** README.md with its generated sections brought up to date. */
export function renderReadme(readme: string, dataModel: string): string {
  return replaceSection(
    replaceSection(readme, 'routes', routeTableMarkdown()),
    'access-patterns',
    accessPatternTable(dataModel),
  );
}
