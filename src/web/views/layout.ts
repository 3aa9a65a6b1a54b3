import { type Html, html, type Part, raw } from '../html.ts';
import { paths } from '../paths.ts';

/** Who is signed in, as every page's header shows it. */
export interface Viewer {
  readonly orgSlug: string;
  readonly tokenName: string;
  /** The session's CSRF token, put in every POST form. */
  readonly csrf: string;
}

export interface Crumb {
  readonly label: string;
  readonly href?: string;
}

export interface PageOptions {
  readonly title: string;
  readonly viewer?: Viewer | undefined;
  readonly crumbs?: readonly Crumb[];
  /** The stylesheet's URL (versioned so it can be cached for long). */
  readonly css: string;
  /**
   * An inline script of the code's own (never data), run at the end of the body. The page's CSP must
   * allow exactly this text by its hash (web/routes.ts `scriptCsp`); pages work without it.
   */
  readonly script?: string;
  /** Seconds after which a browser without scripts reloads the page (a <noscript> meta refresh). */
  readonly refreshWithoutScript?: number;
}

export function csrfField(viewer: Viewer): Html {
  return html`<input type="hidden" name="_csrf" value="${viewer.csrf}">`;
}

function header(viewer: Viewer | undefined): Html {
  if (viewer === undefined) {
    return html`<header class="top"><nav aria-label="Site"><a class="brand" href="/">Mainline</a></nav></header>`;
  }
  return html`<header class="top"><nav aria-label="Site">
<a class="brand" href="${paths.org(viewer.orgSlug)}">Mainline</a>
<a href="${paths.org(viewer.orgSlug)}">Repositories</a>
<a href="${paths.webhooks(viewer.orgSlug)}">Webhooks</a>
<span class="who">Organization <strong>${viewer.orgSlug}</strong> · token “${viewer.tokenName}”</span>
<form method="post" action="/logout">${csrfField(viewer)}<button type="submit">Sign out</button></form>
</nav></header>`;
}

function crumbs(list: readonly Crumb[] | undefined): Html {
  if (list === undefined || list.length === 0) return html``;
  const items = list.map((c, i) =>
    i === list.length - 1 || c.href === undefined
      ? html`<li${i === list.length - 1 ? html` aria-current="page"` : ''}>${c.label}</li>`
      : html`<li><a href="${c.href}">${c.label}</a></li>`,
  );
  return html`<nav class="crumbs" aria-label="Breadcrumb"><ol>${items}</ol></nav>`;
}

/** A whole page: the heading is the page's title; `body` follows it inside <main>. */
export function page(options: PageOptions, body: Part): string {
  return `<!doctype html>\n${html`<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="same-origin">
<title>${options.title} · Mainline</title>
<link rel="stylesheet" href="${options.css}">
${options.refreshWithoutScript !== undefined ? html`<noscript><meta http-equiv="refresh" content="${options.refreshWithoutScript}"></noscript>` : ''}
</head>
<body>
<a class="skip" href="#main">Skip to main content</a>
${header(options.viewer)}
${crumbs(options.crumbs)}
<main id="main" tabindex="-1">
<h1>${options.title}</h1>
${body}
</main>
<footer>Mainline · flaky tests and merge queue</footer>
${options.script !== undefined ? html`<script>${raw(options.script)}</script>` : ''}
</body>
</html>`}\n`;
}
