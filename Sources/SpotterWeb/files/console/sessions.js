// The chat view's Sessions panel: the coach's or client's upcoming video sessions, their status, and the meeting
// link once a session is scheduled.

import { nowMs } from './clock.js';
import { byId, h, show } from './dom.js';
import { formatNumber, formatTime } from './format.js';
import { t } from './i18n.js';
import { state, threads } from './state.js';
import { peerName } from './threads.js';

let sessionsCache = { sessions: [], pending_resolutions: 0 };

/** Forgets the sessions (signing out). */
export function forgetSessions() {
  sessionsCache = { sessions: [], pending_resolutions: 0 };
}

const UPCOMING = new Set(['requested', 'invited', 'alternative_proposed', 'scheduled', 'reschedule_requested', 'needs_resolution', 'in_progress']);

/** Reloads the sessions (after every connect and every session event). */
export function refreshSessions() {
  if (!state.client || !state.me || state.me.role === 'admin') return;
  const current = state.client;
  current.command('sessions').then((result) => {
    if (state.client !== current) return;
    sessionsCache = result;
    renderSessions();
  }).catch(() => {});
}

export function renderSessions() {
  const list = byId('session-list');
  const now = nowMs() / 1000;
  const upcoming = (sessionsCache.sessions ?? [])
    .filter((s) => UPCOMING.has(s.status) && s.start + s.duration_minutes * 60 > now)
    .sort((a, b) => a.start - b.start);
  const items = upcoming.map((s) => {
    const thread = threads.get(s.thread_id);
    const link = safeUrl(s.meet_url);
    return h('li', { className: `session status-${s.status}`, testid: 'session-item', dataset: { status: s.status, sessionId: s.id } },
      h('p', { className: 'session-when' },
        h('time', { datetime: new Date(s.start * 1000).toISOString(), text: formatTime(s.start, true) }),
        ' · ', t('minutes', { n: formatNumber(s.duration_minutes) })),
      h('p', { className: 'session-who', text: thread ? peerName(thread) : '' }),
      h('p', { className: 'session-purpose', text: s.purpose }),
      h('p', { className: 'session-status' },
        h('span', { className: 'status-pill', text: t(`session_${s.status}`) }),
        link && (s.status === 'scheduled' || s.status === 'in_progress')
          ? h('a', { href: link, target: '_blank', rel: 'noopener noreferrer', className: 'meet-link', text: t('meetingLink') })
          : null));
  });
  list.replaceChildren(...items);
  show(byId('sessions-empty'), items.length === 0);
  const badge = byId('sessions-pending');
  const count = sessionsCache.pending_resolutions ?? 0;
  badge.textContent = t('pendingResolutions', { n: formatNumber(count) });
  badge.dataset.count = String(count);
  show(badge, count > 0);
}

function safeUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}
