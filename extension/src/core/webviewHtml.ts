/**
 * What the webview pages (Show Stacks, Compare Across Ranks) share: the HTML shell with a strict
 * CSP (`default-src 'none'`, one nonce for the page's style and its script), the nonce, and
 * escaping. No `vscode` import.
 */
import { randomBytes } from 'node:crypto';

export function escapeHtml(text: string): string {
    return text.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}

/** A nonce for the page's CSP (base64 of 16 random bytes from the caller, or letters). */
export function isNonce(nonce: string): boolean {
    return /^[A-Za-z0-9+/=]{16,}$/.test(nonce);
}

/** A fresh nonce for a page: base64 of 18 random bytes. */
export function newNonce(): string {
    return randomBytes(18).toString('base64');
}

/** A page's own CSS and JavaScript. */
export interface PageAssets {
    style: string;
    script: string;
}

/** The page: `body` with the style and the script under the nonce; `bodyAttrs` (`class="…"`) on the body element. */
export function webviewPage(nonce: string, title: string, { style, script }: PageAssets, body: string, bodyAttrs = ''): string {
    if (!isNonce(nonce)) throw new Error('a nonce of at least 16 base64 characters is needed');
    const csp = `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}';`;
    return `<!DOCTYPE html>
<html><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${style}</style>
</head><body${bodyAttrs ? ` ${bodyAttrs}` : ''}>
${body}
<script nonce="${nonce}">${script}</script>
</body></html>`;
}
