import { html } from '../html.ts';
import { type PageOptions, page } from './layout.ts';

/** The sign-in form. `next` is where to go afterwards (a path of this site). */
export function loginView(
  css: string,
  input: { next: string | undefined; error: string | undefined },
): string {
  return page(
    { title: 'Sign in', css },
    html`<div class="login">
<p>Sign in with an API token of your organization (<code>mainline token create --org &lt;slug&gt;</code>).
The token is checked once; the browser keeps only a signed session that names it, never the token itself.</p>
${input.error !== undefined ? html`<p class="error" role="alert" id="login-error">${input.error}</p>` : ''}
<form method="post" action="/login">
<div class="field">
<label for="token">API token</label>
<input type="password" id="token" name="token" autocomplete="off" required spellcheck="false"${input.error !== undefined ? html` aria-describedby="login-error" aria-invalid="true"` : ''} autofocus>
</div>
${input.next !== undefined ? html`<input type="hidden" name="next" value="${input.next}">` : ''}
<button type="submit">Sign in</button>
</form>
</div>`,
  );
}

/** One page for every "not found": unknown, or another organization's (indistinguishable on purpose). */
export function notFoundView(options: Omit<PageOptions, 'title'>): string {
  return page(
    { ...options, title: 'Not found' },
    html`<p>There is nothing here, or it belongs to an organization you are not signed in to.</p>
<p><a href="/">Go to your repositories</a></p>`,
  );
}

export function errorView(options: Omit<PageOptions, 'title'>, title: string, message: string): string {
  return page(
    { ...options, title },
    html`<p class="error" role="alert">${message}</p><p><a href="/">Go to your repositories</a></p>`,
  );
}
