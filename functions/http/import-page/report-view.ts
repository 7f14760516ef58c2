import { FINDING_KINDS, type ImportReport } from '#domain/import-report';
import type { ImportChoices } from '#domain/imports';
import { type Html, html } from '#shared/html';
import { CHOICE_WORDS, FINDING_WORDS, formatBytes, largeFilesSentence } from './report-words.ts';

/*
 * The import report on the progress page (`GET …/import/report` in plain words): one sentence per
 * kind found, with its first names or paths; what became of the large files; the owner's choices.
 * A `data-live` region, so the live script swaps it in as the raw step records more.
 */

/** Names or paths shown after a kind's sentence (the API lists up to 1,000). */
export const SHOWN_PER_KIND = 5;

function namesAfter(sentence: string, names: readonly string[], count: number): Html {
  if (names.length === 0) return html`${sentence}.`;
  const rest = count - names.length;
  const list = names.map((name, index) => html`${index > 0 ? ', ' : ''}<code>${name}</code>`);
  return html`${sentence}: ${list}${rest > 0 ? `, and ${rest.toLocaleString('en-US')} more` : ''}.`;
}

function findingsList(report: ImportReport): Html | undefined {
  const items = FINDING_KINDS.flatMap((kind) => {
    const finding = report.findings[kind];
    if (!finding || finding.count === 0) return [];
    const words = FINDING_WORDS[kind];
    const names = finding.listed.slice(0, SHOWN_PER_KIND).map(words.label);
    return [
      html`<li data-kind="${kind}">${namesAfter(words.sentence(finding.count, report.choices), names, finding.count)}</li>`,
    ];
  });
  return items.length === 0 ? undefined : html`<ul>${items}</ul>`;
}

function largeFilesLine(report: ImportReport): Html | undefined {
  const large = report.largeFiles;
  if (!large) return undefined;
  const sentence = largeFilesSentence(large.action, large.count, formatBytes(large.size));
  const shown = large.action === 'moved_to_lfs' || large.action === 'removed';
  const names = shown ? large.listed.slice(0, SHOWN_PER_KIND).map((file) => file.path) : [];
  return html`<p data-kind="large_files">${shown ? namesAfter(sentence, names, large.count) : sentence}</p>`;
}

function choicesList(choices: ImportChoices): Html {
  const keys = Object.keys(CHOICE_WORDS) as (keyof ImportChoices)[];
  const items = keys.map((key) => {
    const words = CHOICE_WORDS[key];
    const taken = choices[key];
    return html`<li data-choice="${words.field}" data-taken="${String(taken)}">${taken ? words.yes : words.no} <span class="muted">(<code>${words.field}: ${String(taken)}</code>)</span></li>`;
  });
  return html`<h3 id="report-choices-heading">Your choices</h3>
<ul aria-labelledby="report-choices-heading">${items}</ul>
<p class="muted">Each is a field of <code>PUT …/import</code>; to change one, restart the import with it (<code>PATCH …/import</code> with only that field). Subversion and TFVC histories use them; Git and Mercurial have nothing they apply to.</p>`;
}

/** Whether anything is known: a kind looked for, or the large files scanned. */
const knowsAnything = (report: ImportReport): boolean =>
  Object.keys(report.findings).length > 0 || report.largeFiles !== undefined;

export function reportRegion(report: ImportReport): Html {
  const findings = findingsList(report);
  const summary = !knowsAnything(report)
    ? html`<p class="muted">Nothing is known yet: this fills in as the history is imported.</p>`
    : findings === undefined
      ? html`<p>Everything the import looked for came over as it was${report.status === 'partial' ? ' so far' : ''}.</p>`
      : findings;
  return html`<section id="import-report" data-live aria-labelledby="report-heading">
<h2 id="report-heading">What did not come over as it was</h2>
${summary}
${largeFilesLine(report)}
${choicesList(report.choices)}
</section>`;
}
