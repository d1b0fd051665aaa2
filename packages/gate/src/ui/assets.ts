/**
 * The scripts of the approvals page's passkey sign-in and enrollment, served by the page itself
 * (no third-party request): @simplewebauthn/browser's UMD bundle as installed (its version pinned
 * in package-lock.json) and the page's own few lines that run a ceremony. Pages that load them
 * name them with the response's CSP nonce (app.ts); every other page allows no script at all.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { resolve } from 'node:path';

const require = createRequire(import.meta.url);
let bundle: string | undefined;

/** @simplewebauthn/browser's UMD bundle (it defines `SimpleWebAuthnBrowser`), read once. */
export function simpleWebAuthnBundle(): string {
  // The package's one export is its entry (script/index.js); the browser bundle ships beside it, in dist/bundle.
  const entry = require.resolve('@simplewebauthn/browser');
  bundle ??= readFileSync(resolve(entry, '../../dist/bundle/index.umd.min.js'), 'utf8');
  return bundle;
}

/**
 * The page's ceremony script: a button with `data-ceremony` (`enroll` or `signin`) asks the page
 * for options, runs the ceremony in the browser, posts the result and follows `next`; failures are
 * told in the `#ceremony-status` live region with the server's stable code.
 */
export const APPROVALS_SCRIPT = `'use strict';
(function () {
  var lib = window.SimpleWebAuthnBrowser;
  var status = document.getElementById('ceremony-status');
  function tell(text) { if (status) status.textContent = text; }
  function postJson(path, body) {
    return fetch(path, { method: 'POST', credentials: 'same-origin', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) })
      .then(function (res) {
        return res.json().then(function (answer) {
          if (!res.ok) throw new Error((answer.error && answer.error.code) || ('HTTP ' + res.status));
          return answer;
        });
      });
  }
  var steps = {
    enroll: { run: function (o) { return lib.startRegistration({ optionsJSON: o }); }, options: '/approvers/enroll/options', verify: '/approvers/enroll/verify' },
    signin: { run: function (o) { return lib.startAuthentication({ optionsJSON: o }); }, options: '/signin/passkey/options', verify: '/signin/passkey/verify' }
  };
  Array.prototype.forEach.call(document.querySelectorAll('button[data-ceremony]'), function (button) {
    var step = steps[button.getAttribute('data-ceremony')];
    if (!step || !lib) return;
    var fields = { token: button.getAttribute('data-token') || undefined, return: button.getAttribute('data-return') || undefined };
    button.addEventListener('click', function () {
      button.disabled = true;
      tell('Waiting for your passkey…');
      postJson(step.options, fields)
        .then(step.run)
        .then(function (response) { return postJson(step.verify, Object.assign({ response: response }, fields)); })
        .then(function (done) { tell('Signed in.'); window.location.assign(done.next || '/'); })
        .catch(function (e) { button.disabled = false; tell('Not signed in (' + e.message + ').'); });
    });
  });
})();
`;
