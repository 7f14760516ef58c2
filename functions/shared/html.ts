/**
 * Server-rendered HTML with auto-escaping: every value interpolated into an `html` template is
 * escaped unless it is itself `Html` (another template's output). There is no way to splice an
 * unescaped string in except `trustedHtml`, which exists for the stylesheet constant.
 */
export class Html {
  constructor(readonly value: string) {}
  toString(): string {
    return this.value;
  }
}

const ESCAPES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  // Harmless inside the quoted attributes the templates write; escaped anyway in case one is not.
  '`': '&#96;',
};
export const escapeHtml = (text: string): string =>
  text.replace(/[&<>"'`]/g, (char) => ESCAPES[char] ?? char);

function render(value: unknown): string {
  if (value instanceof Html) return value.value;
  if (Array.isArray(value)) return value.map(render).join('');
  if (value === null || value === undefined || value === false) return '';
  return escapeHtml(String(value));
}

export function html(strings: TemplateStringsArray, ...values: unknown[]): Html {
  let out = strings[0] ?? '';
  values.forEach((value, index) => {
    out += render(value) + (strings[index + 1] ?? '');
  });
  return new Html(out);
}

/** Only for constants written in this code base (never for anything a request or a user supplied). */
export const trustedHtml = (constant: string): Html => new Html(constant);
