// Spotter's web console: one page for coaches, clients and admins. Plain ES modules, no framework, no build step:
// the browser loads this file from index.html and the modules it imports, each served by the server under
// /console/ (Sources/SpotterWeb/WebFiles.swift lists them).
//
// Everything on the live socket goes through SpotterClient (/clients/spotter.js): it reconnects, resumes from the
// last cursor, and resends unacknowledged messages with their client_message_id, so these modules only keep the
// page's state and draw it. Rules they keep:
//   - tokens live in sessionStorage only (never localStorage, never the URL); the UI language, which is not a
//     secret, is remembered in localStorage;
//   - data from the server is put on the page with textContent / DOM APIs only, never innerHTML;
//   - the page is served with a strict CSP: no inline scripts or styles, so state is shown with classes,
//     `hidden` and data-* attributes.
// data-testid attributes are what Tests/browser/console_test.py drives; keep them stable.
//
// The modules, by view:
//   signin.js                 the sign-in view (email and password, or phone and code)
//   threads.js, conversation.js, chat.js, sessions.js
//                             the chat view: the list, the open conversation, the live events, the Sessions panel
//   checkins.js               the coach's Daily check-ins panel (each client's newest, live by client_card)
//   admin.js, figures.js      the admin view: lists and requests; the live figures (metrics.js reads /metrics)
//   client.js                 the signed-in account's SpotterClient, from sign-in to sign-out
//   push.js                   browser notifications: the toggle, the service worker (/console/push-worker.js)
//   page.js, language.js      the top bar and which view shows; English and Arabic
//   i18n.js, dom.js, format.js, clock.js, state.js, storage.js
//                             shared: strings, building nodes, formatting, the browser's clocks, state, storage

import { wireAdmin } from './admin.js';
import { wireAvailability } from './availability.js';
import { signOut, startSession } from './client.js';
import { openThread, wireConversation } from './conversation.js';
import { byId } from './dom.js';
import { lang } from './i18n.js';
import { applyLanguage, setLanguage } from './language.js';
import { takeThreadFromURL, wirePush } from './push.js';
import { refreshSessions } from './sessions.js';
import { showSignIn, wireSignIn } from './signin.js';
import { state } from './state.js';
import { loadSession } from './storage.js';

function boot() {
  wireSignIn(startSession);
  wireConversation();
  byId('lang-switch').addEventListener('click', () => setLanguage(lang === 'ar' ? 'en' : 'ar'));
  byId('signout').addEventListener('click', () => signOut());
  byId('sessions-refresh').addEventListener('click', () => refreshSessions());
  wireAdmin();
  wireAvailability();
  wirePush((threadId) => openThread(threadId, { focus: true }));
  state.wantedThreadId = takeThreadFromURL();
  applyLanguage();
  const stored = loadSession();
  if (stored) startSession(stored);
  else showSignIn();
}

boot();
