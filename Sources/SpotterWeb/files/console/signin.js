// The sign-in view: email and password, or a phone number and the code sent to it.

import { SpotterClient } from '/clients/spotter.js';
import { byId, show } from './dom.js';
import { errorText } from './format.js';
import { lang, t } from './i18n.js';
import { showView } from './page.js';
import { clearStoredSession, saveSession } from './storage.js';

/** Shows the sign-in form, with `message` above it when there is one. */
export function showSignIn(message) {
  showView('signin');
  const error = byId('signin-error');
  error.textContent = message ?? '';
  show(error, Boolean(message));
  byId('signin-email').focus();
}

function signInFailed(error) {
  const node = byId('signin-error');
  node.textContent = typeof error === 'string' ? error : errorText(error);
  show(node, true);
}

async function signInWith(promise, button, onSignedIn) {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = t('signingIn');
  show(byId('signin-error'), false);
  try {
    const result = await promise;
    clearStoredSession();
    const next = { access_token: result.access_token, refresh_token: result.refresh_token, user: result.user };
    saveSession(next);
    for (const form of document.querySelectorAll('#view-signin form')) form.reset();
    resetPhoneForm();
    onSignedIn(next);
  } catch (error) {
    signInFailed(error);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}

let phoneNumber = null;

function resetPhoneForm() {
  phoneNumber = null;
  show(byId('phone-form'), true);
  show(byId('code-form'), false);
  show(byId('dev-code'), false);
}

/** Wires the forms; `onSignedIn(stored)` starts the session a sign-in returned (already saved). */
export function wireSignIn(onSignedIn) {
  byId('signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const email = byId('signin-email').value.trim();
    const password = byId('signin-password').value;
    if (!email || !password) return signInFailed(t('missingCredentials'));
    signInWith(SpotterClient.signIn(location.origin, email, password, { language: lang }), byId('signin-submit'), onSignedIn);
  });
  byId('phone-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const phone = byId('signin-phone').value.trim();
    if (!phone) return signInFailed(t('missingPhone'));
    const button = byId('phone-submit');
    button.disabled = true;
    show(byId('signin-error'), false);
    try {
      const result = await SpotterClient.requestCode(location.origin, phone, { language: lang });
      phoneNumber = result.phone ?? phone;
      byId('code-sent').textContent = t('codeSent', { phone: phoneNumber });
      const hint = byId('dev-code');
      hint.textContent = result.dev_code ? t('devCode', { code: result.dev_code }) : '';
      hint.dataset.code = result.dev_code ?? '';
      show(hint, Boolean(result.dev_code));
      show(byId('phone-form'), false);
      show(byId('code-form'), true);
      byId('signin-code').focus();
    } catch (error) {
      signInFailed(error);
    } finally {
      button.disabled = false;
    }
  });
  byId('code-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const code = byId('signin-code').value.trim();
    if (!code) return signInFailed(t('missingCode'));
    signInWith(SpotterClient.verifyCode(location.origin, phoneNumber, code, { language: lang }), byId('code-submit'), onSignedIn);
  });
  byId('code-cancel').addEventListener('click', () => {
    resetPhoneForm();
    byId('signin-phone').focus();
  });
}
