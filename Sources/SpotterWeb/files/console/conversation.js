// The chat view's open conversation: its messages in seq order with ✓ / ✓✓, the optimistic copies of messages
// being sent, reading receipts, and the composer.

import { SpotterError } from '/clients/spotter.js';
import { nowMs } from './clock.js';
import { announce, byId, h, show } from './dom.js';
import { errorText, formatNumber, formatTime } from './format.js';
import { t } from './i18n.js';
import { setTotalUnread } from './page.js';
import { pending, state, threadMessages, threads } from './state.js';
import { isTyping, peerName, presenceText, renderThreadList, scheduleThreadList } from './threads.js';

let historyMore = false;
// The open conversation's nodes.
let nodesBySeq = new Map(); // seq -> <li>
let nodesByCmid = new Map(); // client_message_id -> <li> (not yet acknowledged)
let lastTypingSent = 0;

/** Forgets the drawn nodes (signing out). */
export function forgetConversationNodes() {
  nodesBySeq = new Map();
  nodesByCmid = new Map();
}

export async function openThread(threadId, { focus } = {}) {
  if (!threads.has(threadId)) return;
  const changed = state.openThreadId !== threadId;
  state.openThreadId = threadId;
  byId('view-chat').classList.add('has-open');
  if (changed) {
    historyMore = false;
    renderConversation();
    byId('messages-scroll').scrollTop = byId('messages-scroll').scrollHeight;
  }
  renderThreadList();
  if (focus) byId('composer-input').focus();
  markRead();
  if (changed) await loadHistory(threadId);
}

function closeThread() {
  state.openThreadId = null;
  byId('view-chat').classList.remove('has-open');
  renderConversation();
  renderThreadList();
}

export async function loadHistory(threadId, beforeSeq) {
  if (!state.client) return;
  const scroller = byId('messages-scroll');
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  try {
    const fields = { thread_id: threadId, limit: 50 };
    if (beforeSeq) fields.before_seq = beforeSeq;
    const result = await state.client.command('history', fields);
    const map = threadMessages(threadId);
    for (const message of result.messages) {
      map.set(message.seq, { ...map.get(message.seq), ...message });
      forgetPending(message);
    }
    const thread = threads.get(threadId);
    if (thread && result.messages.length) thread.last_seq = Math.max(thread.last_seq ?? 0, result.messages[0].seq);
    if (state.openThreadId !== threadId) return;
    historyMore = result.has_more;
    renderConversation();
    // Keep the reader where they were when older messages come in; else go to the newest.
    scroller.scrollTop = beforeSeq ? scroller.scrollHeight - fromBottom : scroller.scrollHeight;
    markRead();
  } catch (error) {
    if (error instanceof SpotterError && ['closed', 'revoked', 'signed_out'].includes(error.code)) return;
    announce(errorText(error));
  }
}

/** An acknowledged message replaces its optimistic copy. */
function forgetPending(message) {
  if (!message.client_message_id || message.sender_id !== state.me?.id) return;
  pending.delete(message.client_message_id);
}

export function messageText(message) {
  if (message.kind === 'meal_log' && message.meal) {
    const calories = message.meal.calories !== undefined ? ` · ${formatNumber(message.meal.calories)} kcal` : '';
    return `🍽 ${t('meal', { name: message.meal.name ?? '' })}${calories}`;
  }
  const files = message.attachments?.length ? ` ${t('attachments', { n: message.attachments.length })}` : '';
  return `${message.text ?? ''}${files}`.trim();
}

/** 'sent' (✓, stored), 'read' (✓✓, the peer's read position passed it), or 'received' / 'system'. */
function messageState(threadId, message) {
  if (message.kind === 'system' || !message.sender_id) return 'system';
  if (message.sender_id !== state.me?.id) return 'received';
  const thread = threads.get(threadId);
  return thread && (thread.peer_read_seq ?? 0) >= message.seq ? 'read' : 'sent';
}

function applyTick(node, tickState) {
  node.dataset.state = tickState;
  const tick = node.querySelector('.tick');
  if (!tick) return;
  if (tickState === 'sending') {
    tick.textContent = t('sending');
    tick.removeAttribute('aria-label');
  } else if (tickState === 'read') {
    tick.textContent = '✓✓';
    tick.setAttribute('aria-label', t('read'));
  } else if (tickState === 'sent') {
    tick.textContent = '✓';
    tick.setAttribute('aria-label', t('sent'));
  }
  tick.title = tick.getAttribute('aria-label') ?? '';
}

function messageNode(threadId, message) {
  const tickState = messageState(threadId, message);
  const own = tickState === 'sent' || tickState === 'read';
  const node = h('li', {
    className: `message message-${message.kind}${own ? ' is-own' : ''}${tickState === 'system' ? ' is-system' : ''}`,
    testid: 'message',
    dataset: { seq: message.seq, kind: message.kind, sender: own ? 'me' : tickState === 'system' ? 'system' : 'peer' },
  },
  h('p', { className: 'message-text', testid: 'message-text', text: messageText(message) }),
  h('p', { className: 'message-meta' },
    h('time', { datetime: new Date(message.created_at * 1000).toISOString(), text: formatTime(message.created_at) }),
    own ? h('span', { className: 'tick', testid: 'message-tick' }) : null));
  applyTick(node, tickState);
  return node;
}

function pendingNode(clientMessageId, entry) {
  const failed = entry.state === 'failed';
  const node = h('li', {
    className: `message message-text is-own is-pending${failed ? ' is-failed' : ''}`,
    testid: 'message',
    dataset: { cmid: clientMessageId, sender: 'me' },
  },
  h('p', { className: 'message-text', testid: 'message-text', text: entry.text }),
  h('p', { className: 'message-meta' },
    failed ? h('span', { className: 'failed-text', role: 'alert', text: t('failed', { error: entry.error }) }) : null,
    failed ? h('button', { type: 'button', className: 'btn btn-small', text: t('retry'), onclick: () => transmit(clientMessageId) }) : null,
    failed ? null : h('span', { className: 'tick', testid: 'message-tick' })));
  if (failed) node.dataset.state = 'failed';
  else applyTick(node, 'sending');
  return node;
}

/** Draws the whole open conversation from the state (after opening it, history, a language switch). */
export function renderConversation() {
  const thread = state.openThreadId ? threads.get(state.openThreadId) : null;
  show(byId('conversation-empty'), !thread);
  show(byId('conversation-body'), Boolean(thread));
  const list = byId('messages');
  nodesBySeq = new Map();
  nodesByCmid = new Map();
  if (!thread) {
    list.replaceChildren();
    return;
  }
  renderConversationHead();
  const nodes = [];
  const sorted = [...threadMessages(thread.thread_id).values()].sort((a, b) => a.seq - b.seq);
  for (const message of sorted) {
    const node = messageNode(thread.thread_id, message);
    nodesBySeq.set(message.seq, node);
    nodes.push(node);
  }
  for (const [clientMessageId, entry] of pending) {
    if (entry.threadId !== thread.thread_id) continue;
    const node = pendingNode(clientMessageId, entry);
    nodesByCmid.set(clientMessageId, node);
    nodes.push(node);
  }
  list.replaceChildren(...nodes);
  show(byId('load-older'), historyMore);
}

export function renderConversationHead() {
  const thread = state.openThreadId ? threads.get(state.openThreadId) : null;
  if (!thread) return;
  byId('peer-name').textContent = peerName(thread);
  const presence = byId('peer-presence');
  presence.textContent = presenceText(thread);
  presence.dataset.online = String(Boolean(thread.peer_online));
  presence.classList.toggle('is-online', Boolean(thread.peer_online));
  const typing = byId('typing');
  typing.textContent = t('typing');
  show(typing, isTyping(thread));
  const inactive = thread.active === false;
  show(byId('inactive-note'), inactive);
  byId('composer-input').disabled = inactive;
  byId('composer-send').disabled = inactive;
}

function nearBottom() {
  const scroller = byId('messages-scroll');
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}

function scrollToBottom() {
  const scroller = byId('messages-scroll');
  scroller.scrollTop = scroller.scrollHeight;
}

/** Puts `node` in seq order: before the first later message, and before the optimistic ones at the end. */
function insertInOrder(node, seq) {
  const list = byId('messages');
  for (const child of list.children) {
    const childSeq = child.dataset.seq ? Number(child.dataset.seq) : Infinity;
    if (childSeq > seq) {
      list.insertBefore(node, child);
      return;
    }
  }
  list.append(node);
}

/** Adds or updates one stored message of the open conversation, exactly once per seq. */
function drawMessage(threadId, message) {
  if (threadId !== state.openThreadId) return;
  const stick = nearBottom();
  const node = messageNode(threadId, message);
  const old = nodesBySeq.get(message.seq);
  const optimistic = message.sender_id === state.me?.id && message.client_message_id ? nodesByCmid.get(message.client_message_id) : null;
  old?.remove();
  if (optimistic) {
    optimistic.remove();
    nodesByCmid.delete(message.client_message_id);
  }
  nodesBySeq.set(message.seq, node);
  insertInOrder(node, message.seq);
  if (stick || message.sender_id === state.me?.id) scrollToBottom();
}

export function storeMessage(threadId, message) {
  const map = threadMessages(threadId);
  map.set(message.seq, { ...map.get(message.seq), ...message });
  forgetPending(message);
  drawMessage(threadId, map.get(message.seq));
}

export function updateTicks() {
  if (!state.openThreadId) return;
  for (const [seq, node] of nodesBySeq) {
    const message = threadMessages(state.openThreadId).get(seq);
    if (message) {
      const tickState = messageState(state.openThreadId, message);
      if (node.dataset.state !== tickState) applyTick(node, tickState);
    }
  }
}

function latestSeq(threadId) {
  const thread = threads.get(threadId);
  let top = thread?.last_seq ?? 0;
  for (const seq of threadMessages(threadId).keys()) top = Math.max(top, seq);
  return top;
}

/** Reports the open, visible conversation read up to its newest message (the peer's ✓✓). */
export function markRead() {
  const threadId = state.openThreadId;
  if (!threadId || !state.client || document.visibilityState !== 'visible') return;
  const thread = threads.get(threadId);
  if (!thread) return;
  const top = latestSeq(threadId);
  if (top === 0 || (top <= (thread.read_seq ?? 0) && !thread.unread)) return;
  if ((thread.readingSeq ?? 0) >= top) return;
  thread.readingSeq = top;
  state.client.command('thread.read', { thread_id: threadId, seq: top }).then((result) => {
    thread.read_seq = Math.max(thread.read_seq ?? 0, result.read_seq);
    thread.unread = result.unread;
    setTotalUnread(result.total_unread);
    scheduleThreadList();
  }).catch(() => {}).finally(() => {
    if (thread.readingSeq === top) thread.readingSeq = 0;
  });
}

// MARK: - Sending

function newClientMessageId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `web-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function sendText(threadId, text) {
  const clientMessageId = newClientMessageId();
  pending.set(clientMessageId, { threadId, text, state: 'sending' });
  if (threadId === state.openThreadId) {
    const node = pendingNode(clientMessageId, pending.get(clientMessageId));
    nodesByCmid.set(clientMessageId, node);
    byId('messages').append(node);
    scrollToBottom();
  }
  transmit(clientMessageId);
}

function transmit(clientMessageId) {
  const entry = pending.get(clientMessageId);
  if (!entry || !state.client) return;
  const current = state.client;
  if (entry.state === 'failed') {
    entry.state = 'sending';
    redrawPending(clientMessageId);
  }
  current.send(entry.threadId, { text: entry.text }, { clientMessageId }).then((message) => {
    if (state.client !== current) return;
    const thread = threads.get(entry.threadId);
    if (thread) {
      thread.last_seq = Math.max(thread.last_seq ?? 0, message.seq);
      thread.last_preview = message.text ?? thread.last_preview;
      thread.last_message_at = message.created_at;
      scheduleThreadList();
    }
    storeMessage(entry.threadId, message);
  }, (error) => {
    if (state.client !== current || !pending.has(clientMessageId)) return;
    entry.state = 'failed';
    entry.error = errorText(error);
    redrawPending(clientMessageId);
  });
}

function redrawPending(clientMessageId) {
  const entry = pending.get(clientMessageId);
  const old = nodesByCmid.get(clientMessageId);
  if (!entry || entry.threadId !== state.openThreadId) return;
  const node = pendingNode(clientMessageId, entry);
  nodesByCmid.set(clientMessageId, node);
  if (old) old.replaceWith(node);
  else byId('messages').append(node);
}

/** Wires the conversation: opening a thread from the list, the composer, the back button and older messages. */
export function wireConversation() {
  byId('thread-list').addEventListener('click', (event) => {
    const item = event.target.closest('[data-testid="thread-item"]');
    if (item) openThread(item.dataset.threadId, { focus: true });
  });
  const form = byId('composer');
  const input = byId('composer-input');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || !state.openThreadId) return;
    const thread = threads.get(state.openThreadId);
    if (thread?.active === false) return;
    input.value = '';
    sendText(state.openThreadId, text);
    input.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === 'Escape' && window.matchMedia('(max-width: 640px)').matches) {
      closeThread();
    }
  });
  input.addEventListener('input', () => {
    if (!state.client || !state.openThreadId || !input.value.trim()) return;
    const now = nowMs();
    if (now - lastTypingSent < 2000) return;
    lastTypingSent = now;
    state.client.command('typing', { thread_id: state.openThreadId }).catch(() => {});
  });
  byId('back-button').addEventListener('click', () => {
    const id = state.openThreadId;
    closeThread();
    if (id) byId('thread-list').querySelector(`[data-thread-id="${CSS.escape(id)}"]`)?.focus();
  });
  byId('load-older').addEventListener('click', () => {
    if (!state.openThreadId) return;
    const seqs = [...threadMessages(state.openThreadId).keys()];
    const oldest = seqs.length ? Math.min(...seqs) : undefined;
    if (oldest && oldest > 1) loadHistory(state.openThreadId, oldest);
  });
  document.addEventListener('visibilitychange', () => markRead());
  window.addEventListener('focus', () => markRead());
}
