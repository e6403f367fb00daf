// The page around the views: the top bar (connection status, who is signed in, the total unread badge) and which
// view shows.

import { byId, show } from './dom.js';
import { formatNumber } from './format.js';
import { STRINGS, t } from './i18n.js';
import { state } from './state.js';

export function renderStatus() {
  const node = byId('status');
  node.dataset.state = state.connectionState;
  node.dataset.liveCount = String(state.liveCount);
  show(node, Boolean(state.client));
  let key = `status_${state.connectionState}`;
  if (state.connectionState === 'connecting' && state.liveCount > 0) key = 'status_reconnecting';
  byId('status-text').textContent = STRINGS.en[key] ? t(key) : '';
}

export function renderWhoami() {
  const me = state.me;
  const node = byId('whoami');
  show(node, Boolean(me));
  show(byId('signout'), Boolean(me));
  if (!me) return;
  node.textContent = `${me.full_name || me.email || me.phone || ''} · ${t(`role_${me.role}`)}`;
}

export function renderTotalUnread() {
  const { me, totalUnread } = state;
  const badge = document.querySelector('[data-testid="total-unread"]');
  badge.textContent = formatNumber(totalUnread);
  badge.dataset.count = String(totalUnread);
  badge.setAttribute('aria-label', t('unreadCount', { n: totalUnread }));
  show(badge, Boolean(me) && me.role !== 'admin' && totalUnread > 0);
  document.title = totalUnread > 0 ? `(${totalUnread}) ${t('title')}` : t('title');
}

export function setTotalUnread(value) {
  if (typeof value !== 'number') return;
  state.totalUnread = value;
  renderTotalUnread();
}

/** Shows one of the views: 'signin', 'chat' or 'admin'. */
export function showView(name) {
  for (const view of ['signin', 'chat', 'admin']) show(byId(`view-${view}`), view === name);
  document.body.dataset.view = name;
}
