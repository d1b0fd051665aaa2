/**
 * What the console's pages load, all from the console itself (no request leaves for another
 * origin): its stylesheet, its own small script for the passkey ceremonies, and
 * @simplewebauthn/browser's bundle, read once from the installed package (its version pinned in
 * package-lock.json). The CSP allows scripts from `'self'` only and no inline script or style.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);

/** @simplewebauthn/browser's UMD bundle (`window.SimpleWebAuthnBrowser`). */
export function webauthnBrowserBundle(): string {
  // The package exports no subpath but its entry (`script/index.js`): the bundle sits beside that folder.
  const entry = require.resolve('@simplewebauthn/browser');
  return readFileSync(join(dirname(entry), '..', 'dist/bundle/index.es5.umd.min.js'), 'utf8');
}

/** The console's own script: the enroll and sign-in buttons run a ceremony and report in a live region. */
export const CONSOLE_SCRIPT = `'use strict';
(function () {
  var W = window.SimpleWebAuthnBrowser;
  // The console's base path (pages.ts writes it on the page): '' on its own listener, '/console' behind the proxy.
  var base = document.documentElement.getAttribute('data-base') || '';
  var status = document.getElementById('ceremony-status');
  function say(text) { if (status) status.textContent = text; }
  function post(path, body) {
    return fetch(base + path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (r) { return r.json().then(function (b) { if (!r.ok) throw new Error((b.error && b.error.code) || String(r.status)); return b; }); });
  }
  function ceremony(button, start, begin, finish, extra) {
    button.addEventListener('click', function () {
      button.disabled = true;
      say('Waiting for your passkey…');
      post(begin, extra)
        .then(function (options) { return start({ optionsJSON: options }); })
        .then(function (response) { return post(finish, Object.assign({ response: response }, extra)); })
        .then(function () { say('Signed in.'); window.location.assign(base + '/'); })
        .catch(function (e) { button.disabled = false; say('That did not work (' + e.message + '). Try again.'); });
    });
  }
  var enroll = document.getElementById('enroll');
  if (enroll && W) ceremony(enroll, W.startRegistration, '/enroll/options', '/enroll/verify', { token: enroll.getAttribute('data-token') });
  var signin = document.getElementById('signin');
  if (signin && W) ceremony(signin, W.startAuthentication, '/signin/options', '/signin/verify', {});
})();
`;

/** Phone first (390 px), readable at 1280 px; colours meet WCAG AA contrast on white. */
export const CONSOLE_STYLESHEET = `
*{box-sizing:border-box}
body{font:16px/1.45 system-ui,sans-serif;margin:0;color:#1b1b1b;background:#fff}
a{color:#0b57b0}
a:focus,button:focus,input:focus,select:focus,textarea:focus{outline:3px solid #b35c00;outline-offset:2px}
.skip{position:absolute;left:-999px}.skip:focus{left:8px;top:8px;background:#fff;padding:4px}
header{background:#12355b;color:#fff;padding:8px 12px}
header a{color:#fff}
nav ul{list-style:none;margin:0;padding:0;display:flex;flex-wrap:wrap;gap:4px 14px}
nav a[aria-current=page]{font-weight:700;text-decoration:underline}
main{padding:12px;max-width:980px;margin:0 auto}
h1{font-size:1.4rem;margin:.4em 0}
h2{font-size:1.15rem;margin:1em 0 .4em}
table{border-collapse:collapse;width:100%}
th,td{border:1px solid #c6c6c6;padding:4px 6px;text-align:left;vertical-align:top}
.scroll{overflow-x:auto}
.grid{table-layout:fixed}
.grid th,.grid td{padding:2px 3px;overflow-wrap:break-word;hyphens:auto;font-size:.75rem}
@media (max-width:480px){.grid th,.grid td{padding:2px 1px;font-size:.66rem}}
.grid td{height:4.6em}
.grid a{display:block;min-height:24px}
.grid .day{font-weight:700;display:block}
.free{background:#fff}.booked{background:#d6e4f5}.held{background:#fdf0c2}.feed{background:#e7dcf3}.hand{background:#e3e3e3}
form.inline{display:inline}
button{font:inherit;padding:8px 14px;border:1px solid #12355b;background:#12355b;color:#fff;border-radius:4px;min-height:44px}
button.secondary{background:#fff;color:#12355b}
label{display:block;margin:.4em 0 .1em}
input,select,textarea{font:inherit;padding:6px;min-height:44px;max-width:100%}
.guest{white-space:pre-wrap;overflow-wrap:anywhere}
.mono{font-family:ui-monospace,monospace;overflow-wrap:anywhere;font-size:.85rem}
.status-fresh{color:#1e6b2a}.status-stale,.status-failed{color:#a30000;font-weight:700}
figure{margin:0 0 1em}svg{max-width:100%;height:auto}
`;
