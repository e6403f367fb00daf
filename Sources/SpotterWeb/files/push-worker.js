// The console's service worker (issue 28, item 8): shows the Web Push notifications Spotter sends to this browser,
// and opens the console at the conversation when one is clicked. Served at /console/push-worker.js (so its scope is
// the console) with a JavaScript type; registered by console/push.js when its user turns notifications on.
//
// A classic script, no imports (every browser runs those as service workers). Its handlers are pure over the scope
// they are given, and are left on `self.spotterPush` so that Tests/js/push-worker.test.js can run them against fake
// scopes.
//
// What Spotter pushes (Protocol/README.md, Notifications) is JSON:
//   {"id":"pos:42:…","title":"Sara","body":"New message from Sara","badge":3,"category":"message",
//    "data":{"thread_id":"…"}}
// A payload without a title is a silent update of the badge (read on another device): the app badge changes and
// nothing is shown. A notification's tag is its thread, so a newer one of a thread replaces the older one.
'use strict';

const CONSOLE_PATH = '/console/';

/** The push's JSON as an object, or null (no data, not JSON, not an object). */
function readPayload(event) {
  if (!event || !event.data) return null;
  try {
    const value = event.data.json();
    return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
  } catch {
    return null;
  }
}

/** The thread a payload is about, or null. */
function threadOf(payload) {
  const id = payload && payload.data && payload.data.thread_id;
  return typeof id === 'string' && id !== '' ? id : null;
}

/** What to show for `payload`: `{title, options}`, or null when it is a silent badge update (no title). */
function notificationFor(payload) {
  if (!payload || typeof payload.title !== 'string' || payload.title === '') return null;
  const threadId = threadOf(payload);
  const category = typeof payload.category === 'string' ? payload.category : null;
  const options = {
    body: typeof payload.body === 'string' ? payload.body : '',
    data: { id: typeof payload.id === 'string' ? payload.id : null, thread_id: threadId, category },
  };
  const tag = threadId ? `thread:${threadId}` : category ? `category:${category}` : null;
  if (tag) {
    options.tag = tag;
    options.renotify = true; // a newer push of the thread replaces the shown one, and is announced again
  }
  return { title: payload.title, options };
}

/** Sets (or, at 0, clears) the app badge where the browser has one; a missing or bad number changes nothing. */
function updateBadge(badge, navigator) {
  if (!Number.isInteger(badge) || badge < 0 || !navigator) return Promise.resolve();
  if (badge === 0 && typeof navigator.clearAppBadge === 'function') return navigator.clearAppBadge().catch(() => {});
  if (typeof navigator.setAppBadge === 'function') return navigator.setAppBadge(badge).catch(() => {});
  return Promise.resolve();
}

/** Handles one push: the badge, then the notification unless the payload has no title. */
function handlePush(payload, scope) {
  const work = [updateBadge(payload && payload.badge, scope.navigator)];
  const shown = notificationFor(payload);
  if (shown) work.push(scope.registration.showNotification(shown.title, shown.options));
  return Promise.all(work);
}

/** The console's URL for a thread (the id in the fragment; never a token in a URL). */
function consoleURL(threadId, origin) {
  const path = threadId ? `${CONSOLE_PATH}#thread=${encodeURIComponent(threadId)}` : CONSOLE_PATH;
  return new URL(path, origin).href;
}

/** Focuses a console window and asks it to open the thread, or opens a new one at the thread. */
async function openThread(threadId, scope) {
  const windows = await scope.clients.matchAll({ type: 'window', includeUncontrolled: true });
  const open = windows.find((client) => {
    try {
      return new URL(client.url).pathname.startsWith(CONSOLE_PATH);
    } catch {
      return false;
    }
  });
  if (open) {
    if (threadId) open.postMessage({ type: 'spotter.open_thread', thread_id: threadId });
    return open.focus();
  }
  return scope.clients.openWindow(consoleURL(threadId, scope.location.origin));
}

function onPush(event, scope) {
  event.waitUntil(handlePush(readPayload(event), scope));
}

function onNotificationClick(event, scope) {
  event.notification.close();
  const data = event.notification.data || {};
  event.waitUntil(openThread(typeof data.thread_id === 'string' ? data.thread_id : null, scope));
}

self.spotterPush = { readPayload, notificationFor, updateBadge, handlePush, consoleURL, openThread, onPush, onNotificationClick };

if (typeof ServiceWorkerGlobalScope !== 'undefined' && self instanceof ServiceWorkerGlobalScope) {
  self.addEventListener('install', () => self.skipWaiting());
  self.addEventListener('activate', (event) => event.waitUntil(self.clients.claim()));
  self.addEventListener('push', (event) => onPush(event, self));
  self.addEventListener('notificationclick', (event) => onNotificationClick(event, self));
}
