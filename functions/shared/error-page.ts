import { type Html, html } from '#shared/html';

/*
 * The web origin's error pages (issue 37): 403, 404 and 500 as pages in the site's layout, with a
 * way on. The web stack renders every refusal of a page route with them, and the not-found page
 * (every path no route serves) is the 404 one.
 */

const HEADINGS: Readonly<Record<number, string>> = {
  400: 'Bad request',
  403: 'Not allowed',
  404: 'Page not found',
  413: 'Too much data',
  500: 'Something went wrong',
  503: 'Try again in a moment',
};

/** The message of a 404 the visitor did not get from a more specific refusal. */
export const NOT_FOUND_MESSAGE =
  'There is no page at this address, or it is not one you can see. Check the address, or start again from your repositories.';

export interface ErrorPageContent {
  readonly status: number;
  readonly title: string;
  readonly body: Html;
}

/** Why a page's form was refused as too large (by the function, or at the edge before it). */
export const tooLargeMessage = (bytes: number): string =>
  `The form sent more than ${bytes.toLocaleString('en-US')} bytes, the most a page takes. Go back and send a smaller file.`;

/** An error page: what happened (`message`, already safe for a visitor to read) and where to go next. */
export function errorPage(status: number, message: string, signedIn: boolean): ErrorPageContent {
  const heading = HEADINGS[status] ?? (status >= 500 ? HEADINGS[500] : 'Error');
  const ways = signedIn
    ? html`<a href="/">Your repositories</a> · <a href="/new/import">Import a repository</a>`
    : html`<a href="/">Home</a> · <a href="/login">Sign in</a>`;
  return {
    status,
    title: `${heading} · ${status}`,
    body: html`<section class="panel error-page" aria-labelledby="error-heading">
<p class="muted">Error ${status}</p>
<h1 id="error-heading">${heading}</h1>
<p id="error-message">${message}</p>
<p>${ways}</p>
</section>`,
  };
}
