import { describe, expect, it } from 'vitest';
import { externalLink } from '#http/settings/settings-page';
import { escapeHtml, Html, html, trustedHtml } from '#shared/html';

const HOSTILE = `"'><script>alert(1)</script>&amp;\`x\``;

describe('html templates', () => {
  it('escape every interpolated string in text content', () => {
    const page = html`<p>${HOSTILE}</p>`.value;
    expect(page).toBe('<p>&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&amp;amp;&#96;x&#96;</p>');
    expect(page).not.toContain('<script>');
  });

  it('keep a value inside a double- or single-quoted attribute', () => {
    const double = html`<input value="${HOSTILE}">`.value;
    const single = html`<input value='${HOSTILE}'>`.value;
    // The only quote characters left are the template's own.
    expect(double.match(/"/g)).toHaveLength(2);
    expect(single.match(/'/g)).toHaveLength(2);
    expect(double.match(/[<>]/g)).toEqual(['<', '>']);
    expect(double).not.toContain('`');
  });

  it('escape & first, so entities in the input show as typed', () => {
    expect(escapeHtml('&lt; &#39; &')).toBe('&amp;lt; &amp;#39; &amp;');
  });

  it('insert nested templates as they are and escape their values once', () => {
    const inner = html`<b>${'<i>'}</b>`;
    expect(html`<p>${inner}</p>`.value).toBe('<p><b>&lt;i&gt;</b></p>');
    expect(html`<p>${html`${html`${'&'}`}`}</p>`.value).toBe('<p>&amp;</p>');
  });

  it('join arrays, escaping strings and keeping templates', () => {
    const items = ['<a>', html`<li>${'"'}</li>`, ['&', html`<hr>`]];
    expect(html`<ul>${items}</ul>`.value).toBe('<ul>&lt;a&gt;<li>&quot;</li>&amp;<hr></ul>');
  });

  it('render null, undefined and false as nothing, and numbers and true as text', () => {
    expect(html`[${null}${undefined}${false}]`.value).toBe('[]');
    expect(html`[${0}${true}${12.5}]`.value).toBe('[0true12.5]');
  });

  it('let only Html values through raw: trustedHtml, never a look-alike object or a string', () => {
    expect(html`${trustedHtml('<style>b{}</style>')}`.value).toBe('<style>b{}</style>');
    expect(html`${{ value: '<b>' }}`.value).toBe('[object Object]');
    expect(html`${{ toString: () => '<b>' }}`.value).toBe('&lt;b&gt;');
    expect(html`${new Html('<b>')}`).toBeInstanceOf(Html);
    expect(String(html`<p>${'<'}</p>`)).toBe('<p>&lt;</p>');
  });
});

describe('externalLink (application URLs in href)', () => {
  it('links http(s) URLs, escaped in the attribute and the text', () => {
    expect(externalLink('https://example.com/?a=1&b="2"').value).toBe(
      '<a href="https://example.com/?a=1&amp;b=&quot;2&quot;" rel="noopener noreferrer">https://example.com/?a=1&amp;b=&quot;2&quot;</a>',
    );
  });

  it.each([
    'javascript:alert(1)',
    'JavaScript:alert(1)',
    ' javascript:alert(1)',
    'java\tscript:alert(1)',
    'data:text/html,<script>alert(1)</script>',
    'vbscript:msgbox(1)',
    '//evil.example/x',
    '/relative',
  ])('shows %j as escaped text, never as a link', (url) => {
    const rendered = externalLink(url).value;
    expect(rendered).not.toContain('<a');
    expect(rendered).not.toContain('<script>');
    expect(rendered).toBe(escapeHtml(url));
  });
});
