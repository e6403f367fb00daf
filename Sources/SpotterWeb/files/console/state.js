// What the signed-in page knows, shared by the views. What only one view needs (its nodes, its timers) stays in
// that view's module.

export const state = {
  session: null, // {access_token, refresh_token, user}
  me: null, // the signed-in user
  client: null, // SpotterClient
  connectionState: 'idle',
  liveCount: 0,
  totalUnread: 0,
  openThreadId: null,
  wantedThreadId: null, // a notification click's thread (/console/#thread=…), opened once the list has loaded
  threadsLoaded: false,
};

export const threads = new Map(); // thread_id -> thread (ThreadView fields + local ones)
export const messages = new Map(); // thread_id -> Map(seq -> MessageView)
export const pending = new Map(); // client_message_id -> {threadId, text, state: 'sending'|'failed', error, createdAt}

export function threadMessages(threadId) {
  let map = messages.get(threadId);
  if (!map) {
    map = new Map();
    messages.set(threadId, map);
  }
  return map;
}
