import { createHash } from 'node:crypto';
import { trustedHtml } from '#shared/html';

/**
 * The import form's only script: while the person types the new repository's name, it asks
 * `GET /new/import/name?name=` (relative to the form's address, so a base path is kept) at most
 * every 300 ms and writes the answer's message into the name's status line, marked as a problem
 * or not. The form works the same without it: the server checks the name again on submit.
 * Nothing is assigned to `innerHTML`: the message is text.
 *
 * Plain ES2017 text, not compiled: the CSP allows exactly these bytes by their hash.
 */
const SCRIPT = `
(function () {
  'use strict';
  var input = document.getElementById('name');
  var status = document.getElementById('name-status');
  if (!input || !status || !window.fetch) return;
  var timer = null;
  var asked = 0;
  function show(available, message) {
    status.textContent = message;
    status.className = available ? 'field-ok' : 'field-error';
    if (available) input.removeAttribute('aria-invalid'); else input.setAttribute('aria-invalid', 'true');
  }
  function check() {
    var name = input.value;
    var mine = ++asked;
    if (name === '') { status.textContent = ''; status.className = 'field-note'; input.removeAttribute('aria-invalid'); return; }
    fetch('import/name?name=' + encodeURIComponent(name), { credentials: 'same-origin', headers: { Accept: 'application/json' } })
      .then(function (response) { if (!response.ok || response.redirected) throw new Error('stop'); return response.json(); })
      .then(function (answer) { if (mine === asked) show(answer.available === true, String(answer.message)); })
      .catch(function () {});
  }
  input.addEventListener('input', function () {
    if (timer) clearTimeout(timer);
    timer = setTimeout(check, 300);
  });
})();
`;

export const NAME_SCRIPT_HASH = `'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;

/** The `<script>` element (a constant of this file, so `trustedHtml` is right). */
export const nameScript = () => trustedHtml(`<script>${SCRIPT}</script>`);
