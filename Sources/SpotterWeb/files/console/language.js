// Switching the page between English and Arabic: every labelled node, the direction, and each view redrawn.

import { renderCoaches, renderFigures, renderRequests } from './admin.js';
import { renderConversation } from './conversation.js';
import { renderPush } from './push.js';
import { byId } from './dom.js';
import { lang, setLang, t } from './i18n.js';
import { renderStatus, renderTotalUnread, renderWhoami } from './page.js';
import { renderSessions } from './sessions.js';
import { renderAvailability } from './availability.js';
import { renderCheckIns } from './checkins.js';
import { state } from './state.js';
import { renderThreadList } from './threads.js';

/** Draws the page in the current language. */
export function applyLanguage() {
  const root = document.documentElement;
  root.lang = lang;
  root.dir = lang === 'ar' ? 'rtl' : 'ltr';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  const toggle = byId('lang-switch');
  toggle.textContent = t('switchLanguage');
  toggle.lang = lang === 'ar' ? 'en' : 'ar';
  toggle.setAttribute('aria-label', t('switchLanguageLabel'));
  toggle.dataset.lang = lang;
  renderStatus();
  renderWhoami();
  renderTotalUnread();
  renderPush();
  const me = state.me;
  if (me && me.role !== 'admin') {
    renderThreadList();
    renderConversation();
    renderSessions();
    renderAvailability();
    renderCheckIns();
  }
  if (me?.role === 'admin') {
    renderFigures();
    renderRequests();
    renderCoaches();
  }
}

export function setLanguage(next) {
  if (next === lang) return;
  setLang(next);
  const client = state.client;
  if (client) client.language = lang;
  applyLanguage();
  // Saved on the account too, so the socket's errors and the session system messages use it.
  if (client) client.api('PUT', '/v1/me/language', { language: lang }).catch(() => {});
}
