import { createHash } from 'node:crypto';
import { trustedHtml } from '#shared/html';

/**
 * The progress page's only script: every 2 s it fetches the page itself, parses the answer with
 * DOMParser and swaps in the regions marked `data-live` (matched by id) whose markup changed. The
 * markup is the server's own, escaped by `html`; nothing is assigned to `innerHTML`. A region is
 * left alone while it holds the focus or an input the user has typed into (their mapping would be
 * lost); its nested `data-live` regions are still updated. The `aria-live` status keeps its element
 * (screen readers announce changes of an element they already know) and gets the new children.
 * Polling stops when the status is final (`data-final` on `#import-status`), when the answer is
 * not the page (signed out, import cancelled elsewhere), or after a run of network failures. When
 * the status turns final while the page watches, it fetches once more: a sync's outcome (the
 * following section) is written just after the import's status.
 *
 * Plain ES2017 text, not compiled: the CSP allows exactly these bytes by their hash.
 */
const SCRIPT = `
(function () {
  'use strict';
  var INTERVAL = 2000;
  var failures = 0;
  var settled = false;
  function adopt(node) { return document.adoptNode(node); }
  function busy(element) {
    if (element.contains(document.activeElement) && document.activeElement !== document.body) return true;
    var inputs = element.querySelectorAll('input:not([type=hidden]), select, textarea');
    for (var i = 0; i < inputs.length; i++) {
      var input = inputs[i];
      if (input.type === 'checkbox' || input.type === 'radio') { if (input.checked !== input.defaultChecked) return true; }
      else if (input.value !== input.defaultValue) return true;
    }
    return false;
  }
  function sync(current, next) {
    if (current.isEqualNode(next)) return;
    if (current.hasAttribute('aria-live')) {
      for (var a = 0; a < next.attributes.length; a++) current.setAttribute(next.attributes[a].name, next.attributes[a].value);
      current.replaceChildren.apply(current, Array.prototype.map.call(next.childNodes, function (n) { return n; }).map(adopt));
      return;
    }
    if (!busy(current)) { current.replaceWith(adopt(next)); return; }
    var inner = next.querySelectorAll('[data-live]');
    for (var i = 0; i < inner.length; i++) {
      var mine = document.getElementById(inner[i].id);
      if (mine && current.contains(mine) && !busy(mine)) mine.replaceWith(adopt(inner[i]));
    }
  }
  function isFinal(doc) {
    var status = doc.getElementById('import-status');
    return !status || status.getAttribute('data-final') === 'true';
  }
  function tick() {
    if (document.hidden) { setTimeout(tick, INTERVAL); return; }
    fetch(location.href, { credentials: 'same-origin', headers: { Accept: 'text/html' } })
      .then(function (response) {
        if (!response.ok || response.redirected) throw new Error('stop');
        return response.text();
      })
      .then(function (text) {
        failures = 0;
        var doc = new DOMParser().parseFromString(text, 'text/html');
        if (!doc.getElementById('import-status')) return;
        var regions = Array.prototype.slice.call(doc.querySelectorAll('[data-live]')).filter(function (region) {
          return !region.parentElement.closest('[data-live]');
        });
        regions.forEach(function (region) {
          var current = document.getElementById(region.id);
          if (current) sync(current, region);
        });
        if (!isFinal(doc)) setTimeout(tick, INTERVAL);
        else if (!settled) { settled = true; setTimeout(tick, INTERVAL); }
      })
      .catch(function (error) {
        if (error && error.message === 'stop') return;
        failures += 1;
        if (failures < 5) setTimeout(tick, INTERVAL * failures);
      });
  }
  if (!isFinal(document)) setTimeout(tick, INTERVAL);
})();
`;

/** The CSP source that allows exactly the script above. */
export const LIVE_SCRIPT_HASH = `'sha256-${createHash('sha256').update(SCRIPT).digest('base64')}'`;

/** The `<script>` element (a constant of this file, so `trustedHtml` is right). */
export const liveScript = () => trustedHtml(`<script>${SCRIPT}</script>`);

/** The script's text, for tests that check the hash against what the page serves. */
export const LIVE_SCRIPT = SCRIPT;
