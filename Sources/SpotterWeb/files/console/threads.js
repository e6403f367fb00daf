// The chat view's list of conversations: one item per thread, with the peer's presence, the last message or
// "typing…", and the unread badge. Opening a thread is the conversation's (chat.js wires the clicks).

import { nowMs } from './clock.js';
import { byId, h, show } from './dom.js';
import { formatNumber, formatTime } from './format.js';
import { t } from './i18n.js';
import { state, threads } from './state.js';

const MONOTONIC = ['last_seq', 'read_seq', 'delivered_seq', 'peer_read_seq', 'peer_delivered_seq'];

/** Adds a thread the server described, or updates the one known; positions only move forward. */
export function mergeThread(view) {
  const existing = threads.get(view.thread_id);
  if (!existing) {
    const thread = { unread: 0, read_seq: 0, peer_read_seq: 0, peer_delivered_seq: 0, last_seq: 0, active: true, ...view };
    threads.set(view.thread_id, thread);
    return thread;
  }
  for (const [key, value] of Object.entries(view)) {
    if (value === undefined) continue;
    if (MONOTONIC.includes(key)) existing[key] = Math.max(existing[key] ?? 0, value ?? 0);
    else existing[key] = value;
  }
  return existing;
}

function sortedThreads() {
  return [...threads.values()].sort((a, b) =>
    (b.active === a.active ? 0 : b.active ? 1 : -1) ||
    (b.last_message_at ?? 0) - (a.last_message_at ?? 0) ||
    String(a.peer_name ?? '').localeCompare(String(b.peer_name ?? '')));
}

export function presenceText(thread) {
  if (thread.peer_online) return t('online');
  if (thread.peer_last_seen_at) return t('lastSeen', { time: formatTime(thread.peer_last_seen_at) });
  return t('offline');
}

export function peerName(thread) {
  return thread?.peer_name || t('unknownPeer');
}

export function isTyping(thread) {
  return Boolean(thread.typingUntil && thread.typingUntil > nowMs());
}

function threadItem(thread) {
  const initials = peerName(thread).split(/\s+/).filter(Boolean).slice(0, 2).map((part) => [...part][0]).join('').toUpperCase();
  const unread = thread.unread ?? 0;
  const open = thread.thread_id === state.openThreadId;
  const preview = isTyping(thread) ? t('typing') : previewText(thread);
  const button = h('button', {
    type: 'button',
    className: `thread${open ? ' is-open' : ''}${thread.active ? '' : ' is-inactive'}${unread > 0 ? ' has-unread' : ''}`,
    testid: 'thread-item',
    dataset: { threadId: thread.thread_id, peerId: thread.peer_id, unread },
    'aria-current': open ? 'true' : undefined,
  },
  h('span', { className: 'avatar', 'aria-hidden': 'true' },
    initials || '?',
    h('span', { className: `presence-dot${thread.peer_online ? ' is-online' : ''}`, testid: 'presence', dataset: { online: Boolean(thread.peer_online) } })),
  h('span', { className: 'thread-main' },
    h('span', { className: 'thread-row' },
      h('span', { className: 'thread-name', testid: 'thread-name', text: peerName(thread) }),
      h('time', { className: 'thread-time', text: formatTime(thread.last_message_at) })),
    h('span', { className: 'thread-row' },
      h('span', { className: `thread-preview${isTyping(thread) ? ' is-typing' : ''}`, testid: 'thread-preview', text: preview }),
      h('span', {
        className: 'badge', testid: 'thread-unread', hidden: unread === 0,
        'aria-label': t('unreadCount', { n: unread }), dataset: { count: unread },
      }, formatNumber(unread))),
    h('span', { className: 'visually-hidden', text: presenceText(thread) })));
  return h('li', {}, button);
}

function previewText(thread) {
  return thread.last_preview ?? '';
}

export function renderThreadList() {
  const list = byId('thread-list');
  const focusedId = document.activeElement?.closest?.('[data-testid="thread-item"]')?.dataset.threadId;
  const items = sortedThreads().map(threadItem);
  list.replaceChildren(...items);
  show(byId('threads-empty'), state.threadsLoaded && items.length === 0);
  if (focusedId) list.querySelector(`[data-thread-id="${CSS.escape(focusedId)}"]`)?.focus();
}

let threadListFrame = 0;
/** Redraws the list once before the next frame, however many changes come in until then. */
export function scheduleThreadList() {
  if (threadListFrame) return;
  threadListFrame = requestAnimationFrame(() => {
    threadListFrame = 0;
    renderThreadList();
  });
}
