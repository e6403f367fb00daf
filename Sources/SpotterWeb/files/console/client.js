// The signed-in account's SpotterClient: made at sign-in (or from the tokens a reload kept), its events sent to
// the views, and torn down at sign-out or when the server ends the session.

import { SpotterClient } from '/clients/spotter.js';
import { startAdmin, stopAdmin } from './admin.js';
import { chatEvents, clearTypingTimers, refreshThreads } from './chat.js';
import { forgetConversationNodes, renderConversation } from './conversation.js';
import { announce, byId } from './dom.js';
import { lang, t } from './i18n.js';
import { applyLanguage } from './language.js';
import { renderStatus, renderWhoami, showView } from './page.js';
import { disablePush, forgetPushDevice, renderPush } from './push.js';
import { forgetSessions, refreshSessions, renderSessions } from './sessions.js';
import { forgetAvailability, refreshAvailability, renderAvailability } from './availability.js';
import { forgetCheckIns, onClientCard, refreshCheckIns, renderCheckIns } from './checkins.js';
import { showSignIn } from './signin.js';
import { messages, pending, state, threads } from './state.js';
import { clearStoredSession, loadCursor, saveCursor, saveSession } from './storage.js';
import { renderThreadList } from './threads.js';

let unsubscribers = [];

/** Signs in with `stored` tokens: connects and shows the user's view. */
export function startSession(stored) {
  state.session = stored;
  state.me = stored.user;
  const client = new SpotterClient({
    url: location.origin,
    accessToken: stored.access_token,
    refreshToken: stored.refresh_token,
    language: lang,
    cursor: loadCursor(),
    onTokens: ({ accessToken, refreshToken }) => {
      state.session = { ...state.session, access_token: accessToken, refresh_token: refreshToken };
      saveSession(state.session);
    },
    onCursor: saveCursor,
  });
  state.client = client;
  const on = (type, fn) => unsubscribers.push(client.on(type, fn));
  on('state', onState);
  on('hello', (frame) => {
    if (frame.user?.id === state.me.id) {
      state.me = { ...state.me, ...frame.user };
      state.session = { ...state.session, user: state.me };
      saveSession(state.session);
      renderWhoami();
    }
  });
  on('revoked', () => endSession(t('sessionEnded')));
  on('signed_out', () => endSession(t('sessionEnded')));
  if (state.me.role === 'admin') {
    showView('admin');
    startAdmin();
  } else {
    for (const [type, fn] of Object.entries(chatEvents)) on(type, fn);
    on('client_card', onClientCard);
    showView('chat');
    renderThreadList();
    renderConversation();
    renderSessions();
    renderAvailability();
    renderCheckIns();
  }
  applyLanguage();
  renderPush();
  client.connect();
  byId('main').focus();
}

/** Tears the signed-in state down; `message` is shown on the sign-in form. */
export function endSession(message) {
  for (const stop of unsubscribers) stop();
  unsubscribers = [];
  const old = state.client;
  state.client = null;
  old?.close();
  stopAdmin();
  clearStoredSession();
  state.session = null;
  state.me = null;
  threads.clear();
  messages.clear();
  pending.clear();
  clearTypingTimers();
  state.totalUnread = 0;
  state.openThreadId = null;
  state.threadsLoaded = false;
  forgetSessions();
  forgetAvailability();
  forgetCheckIns();
  forgetConversationNodes();
  state.connectionState = 'idle';
  state.liveCount = 0;
  byId('thread-list').replaceChildren();
  byId('messages').replaceChildren();
  byId('session-list').replaceChildren();
  byId('view-chat').classList.remove('has-open');
  forgetPushDevice();
  applyLanguage();
  showSignIn(message);
}

export async function signOut() {
  const refreshToken = state.session?.refresh_token;
  // This browser's push device goes first, while the session's token still works.
  const leaving = disablePush(state.client);
  endSession();
  await leaving;
  if (!refreshToken) return;
  try {
    await fetch('/v1/auth/signout', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Accept-Language': lang },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });
  } catch {
    // Signed out locally anyway; the refresh token is forgotten.
  }
}

function onState({ state: next }) {
  const was = state.connectionState;
  state.connectionState = next;
  if (next === 'live' && was !== 'live') {
    state.liveCount += 1;
    if (state.me && state.me.role !== 'admin') {
      // Presence is not logged (a replay does not bring it): reload the list, then the sessions.
      refreshThreads();
      refreshSessions();
      refreshAvailability();
      refreshCheckIns();
    }
  }
  renderStatus();
  if (next !== was && (next === 'live' || next === 'waiting' || next === 'closed')) {
    announce(t('statusAnnounce', { status: byId('status-text').textContent }));
  }
}
