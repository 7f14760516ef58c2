import { createHash } from 'node:crypto';
import { type Html, html, trustedHtml } from './html.ts';

/** The whole stylesheet, inline; the CSP allows exactly this text by its hash (no 'unsafe-inline'). */
const CSS = `
:root { color-scheme: light dark; --fg: #1f2328; --muted: #59636e; --bg: #ffffff; --panel: #f6f8fa; --border: #d1d9e0; --accent: #1f883d; --danger: #cf222e; --link: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #f0f6fc; --muted: #9198a1; --bg: #0d1117; --panel: #151b23; --border: #3d444d; --accent: #238636; --danger: #da3633; --link: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif; color: var(--fg); background: var(--bg); }
header { display: flex; justify-content: space-between; align-items: center; padding: 12px 24px; border-bottom: 1px solid var(--border); background: var(--panel); }
header nav a, header nav form { margin-left: 16px; display: inline; }
main { max-width: 720px; margin: 32px auto; padding: 0 24px; }
a { color: var(--link); }
h1 { font-size: 24px; margin: 0 0 16px; }
h2 { font-size: 18px; margin: 24px 0 8px; }
.panel { border: 1px solid var(--border); border-radius: 6px; padding: 16px 20px; background: var(--panel); margin-bottom: 16px; }
label { display: block; font-weight: 600; margin: 12px 0 4px; }
input[type=text], input[type=password], input[type=email], input[type=url] { width: 100%; padding: 6px 10px; font: inherit; border: 1px solid var(--border); border-radius: 6px; background: var(--bg); color: var(--fg); }
textarea { width: 100%; padding: 6px 10px; font: 14px/1.4 ui-monospace, monospace; border: 1px solid var(--border); border-radius: 6px; background: var(--bg); color: var(--fg); }
input:focus-visible, button:focus-visible, a:focus-visible { outline: 2px solid var(--link); outline-offset: 2px; }
button { font: inherit; font-weight: 600; padding: 6px 16px; border-radius: 6px; border: 1px solid var(--border); background: var(--panel); color: var(--fg); cursor: pointer; }
button.primary { background: var(--accent); border-color: var(--accent); color: #fff; }
button.danger { color: var(--danger); }
.link-button { background: none; border: 0; padding: 0; color: var(--link); font-weight: normal; text-decoration: underline; }
.actions { display: flex; gap: 12px; margin-top: 20px; align-items: center; }
.muted { color: var(--muted); }
.error { border: 1px solid var(--danger); color: var(--danger); border-radius: 6px; padding: 8px 12px; margin-bottom: 16px; }
.notice { border: 1px solid var(--accent); border-radius: 6px; padding: 8px 12px; margin-bottom: 16px; }
.secret { font-family: ui-monospace, monospace; font-size: 14px; word-break: break-all; padding: 8px; border: 1px dashed var(--border); }
ul.scopes { list-style: none; padding: 0; }
ul.scopes li { padding: 6px 0; border-top: 1px solid var(--border); }
table { width: 100%; border-collapse: collapse; }
dl { display: grid; grid-template-columns: max-content 1fr; gap: 4px 16px; margin: 0; }
dt { font-weight: 600; }
dd { margin: 0; }
th, td { text-align: left; padding: 6px 8px; border-top: 1px solid var(--border); vertical-align: top; }
.visually-hidden { position: absolute; width: 1px; height: 1px; padding: 0; margin: -1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; border: 0; }
progress { width: 100%; height: 12px; accent-color: var(--accent); }
ol.steps { list-style: none; padding: 0; margin: 0; }
ol.steps li { padding: 8px 0; border-top: 1px solid var(--border); }
ol.steps li label { margin: 0; display: flex; justify-content: space-between; }
fieldset { border: 1px solid var(--border); border-radius: 6px; margin: 12px 0; }
input[type=radio] + span { font-weight: normal; }
header .brand { color: var(--fg); text-decoration: none; font-weight: 700; }
fieldset label { font-weight: normal; }
legend { font-weight: 600; padding: 0 4px; }
.field-note, .field-error, .field-ok { margin: 4px 0 0; font-size: 14px; min-height: 1.5em; }
.field-note { color: var(--muted); }
.field-error { color: var(--danger); }
.field-ok { color: var(--accent); }
input[aria-invalid=true] { border-color: var(--danger); }
.page-head { display: flex; justify-content: space-between; align-items: center; gap: 12px; flex-wrap: wrap; margin-bottom: 16px; }
.page-head h1 { margin: 0; }
a.button-link { display: inline-block; padding: 6px 16px; border-radius: 6px; background: var(--accent); border: 1px solid var(--accent); color: #fff; font-weight: 600; text-decoration: none; }
.badge { display: inline-block; font-size: 12px; font-weight: normal; line-height: 18px; border: 1px solid var(--border); border-radius: 2em; padding: 0 7px; margin-left: 6px; color: var(--muted); }
ul.repo-list { list-style: none; padding: 0; margin: 0; }
ul.repo-list li { display: grid; grid-template-columns: minmax(0, 5fr) minmax(0, 4fr) minmax(0, 3fr) minmax(0, 3fr); gap: 4px 16px; align-items: center; padding: 8px 0; border-top: 1px solid var(--border); }
ul.repo-list li.repo-list-head { font-weight: 600; color: var(--muted); font-size: 14px; border-top: 0; }
.repo-name { font-weight: 600; overflow-wrap: anywhere; }
.repo-percent { display: flex; align-items: center; gap: 6px; white-space: nowrap; }
.repo-percent progress { flex: 1; min-width: 3em; }
.error-page { margin-top: 24px; }
form.panel h2:first-of-type { margin-top: 0; }
main:has(ul.repo-list) { max-width: 1012px; }
@media (max-width: 640px) {
  header { flex-wrap: wrap; gap: 8px; padding: 12px 16px; }
  header nav a, header nav form { margin: 0 12px 0 0; }
  main { margin: 20px auto; padding: 0 16px; }
  ul.repo-list li { grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); }
  ul.repo-list li.repo-list-head { display: none; }
  ul.repo-list li > :first-child { grid-column: 1 / -1; }
}
main:has(.wide) { max-width: 1200px; }
ul.counts { display: flex; flex-wrap: wrap; gap: 4px 20px; list-style: none; padding: 0; margin: 0 0 12px; }
ul.counts strong { font-size: 20px; }
table.compact th, table.compact td { padding: 4px 8px; font-size: 14px; }
table.compact td.num { font-variant-numeric: tabular-nums; white-space: nowrap; }
table.compact tr[data-group=problem] td:first-child { box-shadow: inset 3px 0 var(--danger); }
.form-row { display: flex; flex-wrap: wrap; gap: 8px 16px; align-items: center; }
.form-row label { margin: 0; }
table.projects td { vertical-align: middle; }
table.projects label { margin: 0; font-weight: normal; }
.actions.wrap { flex-wrap: wrap; }
.actions.wrap button { white-space: nowrap; }
input[type=number] { width: 7em; padding: 5px 8px; font: inherit; border: 1px solid var(--border); border-radius: 6px; background: var(--bg); color: var(--fg); }
@media (max-width: 640px) {
  main { padding: 0 12px; margin-top: 16px; }
  table.stack thead { display: none; }
  table.stack tr { display: flex; flex-wrap: wrap; gap: 0 12px; border-top: 1px solid var(--border); padding: 6px 0; }
  table.stack td { border: 0; padding: 0; }
  table.stack td:first-child { flex-basis: 100%; font-weight: 600; }
  table.stack td.labelled { flex-basis: 100%; order: 1; }
  table.stack td.labelled::before { content: attr(data-label) ": "; color: var(--muted); }
  table.stack td.empty { display: none; }
}
.panel > h2:first-child { margin-top: 0; }
`;

export const STYLE_HASH = `'sha256-${createHash('sha256').update(CSS).digest('base64')}'`;

export interface PageContext {
  /** Who is signed in (shown in the header, with a sign-out button). */
  readonly login?: string | undefined;
  /** CSRF token for the forms on the page (the header's sign-out form uses it too). */
  readonly csrf: string;
}

/**
 * The page frame: accessible landmarks, the inline stylesheet, the signed-in header. `styled: false`
 * leaves the stylesheet out, for a page that must be small (the edge's 413 page, which CloudFront
 * Functions' 10 KB bound cannot hold with it).
 */
export function page(title: string, context: PageContext, body: Html, { styled = true } = {}): Html {
  const account = context.login
    ? html`<nav aria-label="Account">
        <a href="/settings/connections/applications">Applications</a>
        <a href="/settings/tokens">Tokens</a>
        <a href="/settings/security-log">Security log</a>
        <a href="/settings/developers">Developer settings</a>
        <form method="post" action="/logout"><input type="hidden" name="_csrf" value="${context.csrf}"><button type="submit" class="link-button">Sign out ${context.login}</button></form>
      </nav>`
    : html`<nav aria-label="Account"><a href="/login">Sign in</a></nav>`;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title}</title>
${styled ? html`<style>${trustedHtml(CSS)}</style>` : ''}
</head>
<body>
<header><a class="brand" href="/">OAuth service</a>${account}</header>
<main id="main">
${body}
</main>
</body>
</html>`;
}

/** A hidden CSRF field for a form. */
export const csrfField = (token: string): Html => html`<input type="hidden" name="_csrf" value="${token}">`;
