// The console's service worker (Sources/SpotterWeb/files/push-worker.js) run against fake scopes: what a push shows,
// the badge, the tag per thread, and where a click goes. No browser and no push service: the worker is a classic
// script, run here in a context whose `self` is the fake (it leaves its handlers on `self.spotterPush`).
// Run: node --test Tests/js/push-worker.test.js
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import vm from 'node:vm';

const source = readFileSync(new URL('../../Sources/SpotterWeb/files/push-worker.js', import.meta.url), 'utf8');

/** An object made in the worker's context, as one of this one (deepEqual compares prototypes). */
const plain = (value) => JSON.parse(JSON.stringify(value));

/** A fake service worker scope: records notifications shown, badges set, windows focused, opened and messaged. */
function fakeScope({ windows = [], badgeAPI = true } = {}) {
  const log = { shown: [], badges: [], opened: [], focused: [], messages: [], listeners: [] };
  const navigator = badgeAPI
    ? {
        setAppBadge: async (count) => { log.badges.push(count); },
        clearAppBadge: async () => { log.badges.push('cleared'); },
      }
    : {};
  const clients = windows.map((url) => ({
    url,
    focus: async () => { log.focused.push(url); },
    postMessage: (message) => { log.messages.push({ url, message: plain(message) }); },
  }));
  const scope = {
    navigator,
    location: { origin: 'https://coach.example' },
    registration: { showNotification: async (title, options) => { log.shown.push({ title, options }); } },
    clients: {
      matchAll: async (options) => {
        assert.deepEqual(plain(options), { type: 'window', includeUncontrolled: true });
        return clients;
      },
      openWindow: async (url) => { log.opened.push(url); },
    },
    addEventListener: (type) => log.listeners.push(type),
  };
  return { scope, log };
}

/** Runs the worker with `scope` as `self`; returns its handlers. */
function load(scope) {
  const context = vm.createContext({ self: scope, URL, Promise, console });
  vm.runInContext(source, context, { filename: 'push-worker.js' });
  return scope.spotterPush;
}

/** A push event carrying `data` (an object sent as JSON, a string as raw text, undefined for none). */
function pushEvent(data) {
  const event = { waited: [] };
  event.waitUntil = (promise) => event.waited.push(promise);
  if (data !== undefined) {
    const text = typeof data === 'string' ? data : JSON.stringify(data);
    event.data = { json: () => JSON.parse(text), text: () => text };
  }
  return event;
}

async function push(worker, scope, data) {
  const event = pushEvent(data);
  worker.onPush(event, scope);
  assert.equal(event.waited.length, 1, 'the push waits for its work');
  await Promise.all(event.waited);
}

const message = {
  id: 'pos:42:user-1', title: 'Sara', body: '3 new messages from Sara', badge: 3, category: 'message',
  data: { thread_id: 'thread-7', seq: 12 },
};

test('outside a service worker the script adds no listeners and leaves its handlers', () => {
  const { scope, log } = fakeScope();
  const worker = load(scope);
  assert.deepEqual(log.listeners, []);
  for (const name of ['onPush', 'onNotificationClick', 'notificationFor', 'readPayload', 'handlePush']) {
    assert.equal(typeof worker[name], 'function', name);
  }
});

test('a message push shows one notification tagged by its thread, and sets the badge', async () => {
  const { scope, log } = fakeScope();
  const worker = load(scope);
  await push(worker, scope, message);
  assert.equal(log.shown.length, 1);
  const { title, options } = log.shown[0];
  assert.equal(title, 'Sara');
  assert.equal(options.body, '3 new messages from Sara');
  assert.equal(options.tag, 'thread:thread-7');
  assert.equal(options.renotify, true);
  assert.deepEqual(plain(options.data), { id: 'pos:42:user-1', thread_id: 'thread-7', category: 'message' });
  assert.deepEqual(log.badges, [3]);

  // A newer push of the same thread has the same tag (the browser replaces the older one); another thread another.
  await push(worker, scope, { ...message, body: '4 new messages from Sara', badge: 4 });
  await push(worker, scope, { ...message, title: 'Omar', data: { thread_id: 'thread-9' } });
  assert.deepEqual(log.shown.map((shown) => shown.options.tag), ['thread:thread-7', 'thread:thread-7', 'thread:thread-9']);
  assert.deepEqual(log.badges, [3, 4, 3]);
});

test('a payload without a title is a silent badge update: nothing is shown', async () => {
  const { scope, log } = fakeScope();
  const worker = load(scope);
  await push(worker, scope, { id: 'pos:43:user-1', badge: 0, data: { thread_id: 'thread-7' } });
  await push(worker, scope, { id: 'pos:44:user-1', title: '', badge: 2 });
  assert.deepEqual(log.shown, []);
  assert.deepEqual(log.badges, ['cleared', 2]);
});

test('a browser without the badge API still shows; bad payloads show nothing and throw nothing', async () => {
  const { scope, log } = fakeScope({ badgeAPI: false });
  const worker = load(scope);
  await push(worker, scope, message);
  assert.equal(log.shown.length, 1);
  for (const data of [undefined, 'not json', '[1,2]', 'null', '"text"', { title: 42, body: 'x' }, { badge: -1 }, { badge: 1.5 }]) {
    await push(worker, scope, data);
  }
  assert.equal(log.shown.length, 1);
  assert.deepEqual(log.badges, []);
});

test('a session push without a thread is tagged by its category; one with neither has no tag', async () => {
  const { scope, log } = fakeScope();
  const worker = load(scope);
  await push(worker, scope, { id: 'pos:50:u', title: 'Session starting soon', body: 'Tuesday at 9:00 AM', category: 'reminder' });
  await push(worker, scope, { id: 'pos:51:u', title: 'Hello', body: '\u202Bمرحبا\u202C <b>not html</b>' });
  assert.equal(log.shown[0].options.tag, 'category:reminder');
  assert.equal('tag' in log.shown[1].options, false);
  assert.equal('renotify' in log.shown[1].options, false);
  assert.equal(log.shown[1].options.body, '\u202Bمرحبا\u202C <b>not html</b>', 'the body is passed on as text');
});

function click(worker, scope, data) {
  const event = { waited: [], notification: { data, closed: false, close() { this.closed = true; } } };
  event.waitUntil = (promise) => event.waited.push(promise);
  worker.onNotificationClick(event, scope);
  return Promise.all(event.waited).then(() => event);
}

test('a click focuses an open console and asks it to open the thread', async () => {
  const { scope, log } = fakeScope({ windows: ['https://coach.example/elsewhere', 'https://coach.example/console/'] });
  const worker = load(scope);
  const event = await click(worker, scope, { thread_id: 'thread-7' });
  assert.equal(event.notification.closed, true);
  assert.deepEqual(log.focused, ['https://coach.example/console/']);
  assert.deepEqual(log.messages, [{ url: 'https://coach.example/console/', message: { type: 'spotter.open_thread', thread_id: 'thread-7' } }]);
  assert.deepEqual(log.opened, []);
});

test('a click with no console open opens one at the thread (its id in the fragment, escaped)', async () => {
  const { scope, log } = fakeScope({ windows: ['https://coach.example/other/'] });
  const worker = load(scope);
  await click(worker, scope, { thread_id: 'a b/#c' });
  assert.deepEqual(log.opened, ['https://coach.example/console/#thread=a%20b%2F%23c']);
  await click(worker, scope, null);
  await click(worker, scope, { thread_id: 42 });
  assert.deepEqual(log.opened.slice(1), ['https://coach.example/console/', 'https://coach.example/console/']);
  assert.deepEqual(log.focused, []);
});
