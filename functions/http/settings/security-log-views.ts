import { SECURITY_EVENTS, type SecurityEvent } from '#domain/security-log';
import type { WebReply } from '#http/middleware/web-stack';
import { type Html, html } from '#shared/html';
import { formatDate } from './format.ts';
import { paths } from './settings-page.ts';

/** Who acted, in words: you, an application (by name and client id), an administrator, or no one signed in. */
function actorText(event: SecurityEvent): Html {
  const { actor } = event;
  switch (actor.kind) {
    case 'user':
      return actor.login.toLowerCase() === event.login.toLowerCase()
        ? html`You`
        : html`<code>${actor.login}</code>`;
    case 'app':
      return html`${actor.appName ?? 'An application'} (<code>${actor.clientId}</code>)`;
    case 'admin':
      return html`An administrator`;
    case 'service':
      return html`This service, as you asked`;
    case 'anonymous':
      return html`Someone not signed in`;
  }
}

/** What the event is about: the token, the application, the repository, how many. */
function subjectText(event: SecurityEvent): Html {
  const { subject } = event;
  const parts: Html[] = [];
  if (subject.token)
    parts.push(
      html`token “${subject.token.note ?? '(no note)'}” ending <code>…${subject.token.lastEight}</code>`,
    );
  if (subject.application)
    parts.push(
      html`${subject.application.name ?? 'application'} (<code>${subject.application.clientId}</code>)`,
    );
  if (subject.repository) parts.push(html`<code>${subject.repository}</code>`);
  if (subject.author)
    parts.push(
      html`author ${subject.author.id} → ${subject.author.name ?? ''} &lt;${subject.author.email ?? ''}&gt;`,
    );
  if (subject.count !== undefined)
    parts.push(
      event.kind === 'failedSignIn'
        ? html`${subject.count} failed ${subject.count === 1 ? 'attempt' : 'attempts'} that minute`
        : html`${subject.count} ${subject.count === 1 ? 'author' : 'authors'} changed`,
    );
  if (subject.detail) parts.push(html`<span class="muted">${subject.detail}</span>`);
  return html`${parts.map((part, index) => html`${index > 0 ? ', ' : ''}${part}`)}`;
}

/** GET /settings/security-log: the person's events, newest first, a page at a time. */
export function securityLogPage(events: readonly SecurityEvent[], next: string | undefined): WebReply {
  const rows = events.map(
    (event) => html`<tr>
  <td><time datetime="${event.createdAt}">${formatDate(event.createdAt)}, ${event.createdAt.slice(11, 19)} UTC</time></td>
  <td><code>${SECURITY_EVENTS[event.kind].action}</code><br>${SECURITY_EVENTS[event.kind].text}</td>
  <td>${actorText(event)}</td>
  <td>${event.origin.address ?? html`<span class="muted">none</span>`}</td>
  <td>${subjectText(event)}</td>
</tr>`,
  );
  return {
    title: 'Security log',
    body: html`<h1>Security log</h1>
<p class="muted">What was done in your name in the last 90 days: sign-ins, tokens, applications and imports, by you or by an application you authorized, newest first.</p>
${
  events.length === 0
    ? html`<p class="panel">Nothing here yet.</p>`
    : html`<table>
<caption class="muted">Security events, newest first</caption>
<thead><tr><th scope="col">When</th><th scope="col">Event</th><th scope="col">By</th><th scope="col">From address</th><th scope="col">About</th></tr></thead>
<tbody>${rows}</tbody>
</table>`
}
${next ? html`<nav aria-label="Pages"><a href="${paths.securityLog}?cursor=${next}" rel="next">Older events</a></nav>` : undefined}`,
  };
}
