// The chat view's live side: the conversation list reloaded after each connect, and the socket's events
// (messages, receipts, unread counts, thread changes, presence, typing) applied to the state and drawn.

import { SpotterError } from '/clients/spotter.js';
import { nowMs } from './clock.js';
import { announce } from './dom.js';
import { t } from './i18n.js';
import {
  loadHistory, markRead, messageText, openThread, renderConversation, renderConversationHead, storeMessage, updateTicks,
} from './conversation.js';
import { setTotalUnread } from './page.js';
import { refreshSessions } from './sessions.js';
import { messages, state, threadMessages, threads } from './state.js';
import { mergeThread, peerName, renderThreadList, scheduleThreadList } from './threads.js';

const typingTimers = new Map(); // thread_id -> timer hiding "typing…"

let threadsInFlight = null;
let threadsAgain = false;

/** Reloads the conversation list (after every connect: presence and counts are current there). */
export function refreshThreads() {
  if (!state.client) return Promise.resolve();
  if (threadsInFlight) {
    threadsAgain = true;
    return threadsInFlight;
  }
  const current = state.client;
  threadsInFlight = current.command('threads').then((result) => {
    if (state.client !== current) return;
    const seen = new Set();
    for (const view of result.threads) {
      seen.add(view.thread_id);
      const thread = mergeThread(view);
      thread.unread = view.unread;
    }
    for (const id of [...threads.keys()]) if (!seen.has(id)) threads.delete(id);
    state.threadsLoaded = true;
    setTotalUnread(result.total_unread);
    if (state.openThreadId && !threads.has(state.openThreadId)) state.openThreadId = null;
    const wanted = state.wantedThreadId;
    state.wantedThreadId = null;
    if (wanted && threads.has(wanted) && wanted !== state.openThreadId) return openThread(wanted, { focus: false });
    if (!state.openThreadId && state.me.role === 'client') {
      // A client usually has one coach: open their conversation at once.
      const first = [...threads.values()].find((thread) => thread.active) ?? threads.values().next().value;
      if (first) return openThread(first.thread_id, { focus: false });
    }
    renderThreadList();
    if (state.openThreadId) {
      renderConversationHead();
      updateTicks();
      markRead();
    }
  }).catch((error) => {
    if (!(error instanceof SpotterError) || !['closed', 'revoked', 'signed_out', 'connection_lost'].includes(error.code)) {
      console.warn('threads', error);
    }
  }).finally(() => {
    threadsInFlight = null;
    if (threadsAgain) {
      threadsAgain = false;
      refreshThreads();
    }
  });
  return threadsInFlight;
}

function onMessage(event) {
  const message = event.message;
  const threadId = message.thread_id;
  let thread = threads.get(threadId);
  if (!thread) {
    threadMessages(threadId).set(message.seq, message);
    refreshThreads();
    return;
  }
  thread.last_seq = Math.max(thread.last_seq ?? 0, message.seq);
  if (message.kind !== 'system') {
    // The list's preview stays the last message a person wrote.
    thread.last_preview = messageText(message);
    thread.last_message_at = message.created_at;
    thread.last_sender_id = message.sender_id;
  }
  thread.unread = event.unread;
  setTotalUnread(event.total_unread);
  const fromPeer = message.sender_id && message.sender_id !== state.me.id;
  if (message.sender_id === state.me.id) {
    // Sending marks the thread read up to the message.
    thread.read_seq = Math.max(thread.read_seq ?? 0, message.seq);
  }
  if (fromPeer) {
    // A message from the peer means they have read the thread up to it.
    thread.peer_read_seq = Math.max(thread.peer_read_seq ?? 0, message.seq);
    thread.peer_delivered_seq = Math.max(thread.peer_delivered_seq ?? 0, message.seq);
    thread.typingUntil = 0;
  }
  storeMessage(threadId, message);
  if (threadId === state.openThreadId) {
    renderConversationHead();
    updateTicks();
  }
  if (fromPeer) {
    const visible = threadId === state.openThreadId && document.visibilityState === 'visible';
    if (visible) markRead();
    else {
      state.client.command('receipt.delivered', { thread_id: threadId, seq: message.seq }).catch(() => {});
      announce(t('newMessageFrom', { name: peerName(thread), text: messageText(message) }));
    }
  }
  scheduleThreadList();
}

function onSession(event) {
  if (event.message) {
    const thread = threads.get(event.message.thread_id);
    if (thread) {
      thread.last_seq = Math.max(thread.last_seq ?? 0, event.message.seq);
      thread.unread = event.unread;
      storeMessage(thread.thread_id, event.message);
      if (thread.thread_id === state.openThreadId) markRead();
      scheduleThreadList();
    }
    setTotalUnread(event.total_unread);
  }
  refreshSessions();
}

function onReceipt(event) {
  if (event.user_id === state.me.id) return;
  const thread = threads.get(event.thread_id);
  if (!thread) return;
  thread.peer_read_seq = Math.max(thread.peer_read_seq ?? 0, event.read_seq ?? 0);
  thread.peer_delivered_seq = Math.max(thread.peer_delivered_seq ?? 0, event.delivered_seq ?? 0);
  if (event.thread_id === state.openThreadId) updateTicks();
}

function onUnread(event) {
  const thread = threads.get(event.thread_id);
  if (thread) {
    thread.unread = event.unread;
    thread.read_seq = Math.max(thread.read_seq ?? 0, event.read_seq ?? 0);
  }
  setTotalUnread(event.total_unread);
  scheduleThreadList();
}

function onThread(event) {
  mergeThread({ thread_id: event.thread_id, peer_id: event.peer_id, peer_name: event.peer_name ?? undefined, active: event.active });
  scheduleThreadList();
  if (event.thread_id === state.openThreadId) renderConversationHead();
  refreshThreads();
}

function onPresence(event) {
  for (const thread of threads.values()) {
    if (thread.peer_id !== event.user_id) continue;
    thread.peer_online = event.online;
    if (event.last_seen_at) thread.peer_last_seen_at = event.last_seen_at;
  }
  scheduleThreadList();
  renderConversationHead();
}

function onTyping(event) {
  if (event.user_id === state.me.id) return;
  const thread = threads.get(event.thread_id);
  if (!thread) return;
  const seconds = Number(event.expires_in) || 5;
  thread.typingUntil = nowMs() + seconds * 1000;
  clearTimeout(typingTimers.get(thread.thread_id));
  typingTimers.set(thread.thread_id, setTimeout(() => {
    typingTimers.delete(thread.thread_id);
    if (threads.get(thread.thread_id) !== thread) return;
    thread.typingUntil = 0;
    scheduleThreadList();
    renderConversationHead();
  }, seconds * 1000 + 50));
  scheduleThreadList();
  renderConversationHead();
}

function onReset() {
  // The server could not resume our cursor: reload the list and the open conversation.
  const open = state.openThreadId;
  messages.clear();
  refreshThreads();
  if (open) {
    renderConversation();
    loadHistory(open);
  }
}

/** The chat events SpotterClient emits, by type, and what each does. */
export const chatEvents = {
  message: onMessage,
  receipt: onReceipt,
  unread: onUnread,
  thread: onThread,
  presence: onPresence,
  typing: onTyping,
  session: onSession,
  reset: onReset,
};

/** Stops the typing timers (signing out). */
export function clearTypingTimers() {
  for (const timer of typingTimers.values()) clearTimeout(timer);
  typingTimers.clear();
}
