// Browser notifications (Web Push, issue 28 item 8): the top bar's toggle subscribes this browser and registers it
// as one of the signed-in account's devices, so that Spotter can reach the console while no page holds a socket.
//
// Turning on (a click, never on load): ask the browser's permission, register the service worker
// (/console/push-worker.js, scope /console/), fetch the server's VAPID key (GET /v1/push/vapid-public-key),
// pushManager.subscribe({userVisibleOnly: true, applicationServerKey}) and POST subscription.toJSON() to
// /v1/me/devices. Turning off, and signing out: DELETE the device, then unsubscribe the browser. The device's id is
// kept in sessionStorage (it belongs to this sign-in: the server drops it when the session ends anyway).
// A click on a notification opens the console at its thread: the worker posts `spotter.open_thread` to an open
// console, or opens /console/#thread=<id>, which `takeThreadFromURL` reads once.

import { announce, byId, show } from './dom.js';
import { t } from './i18n.js';
import { state } from './state.js';

const WORKER_URL = '/console/push-worker.js';
const SCOPE = '/console/';
const DEVICE_KEY = 'spotter.console.pushDevice'; // sessionStorage: the id of this browser's device

let busy = false;

/** Whether this browser can take Web Push at all (a secure context with service workers and the Push API). */
export function pushSupported(scope = globalThis) {
  return Boolean(scope.isSecureContext && scope.navigator?.serviceWorker && scope.PushManager && scope.Notification);
}

/** The bytes of a base64url text (padding optional), as the Push API takes an applicationServerKey. */
export function base64UrlToBytes(text) {
  const base64 = text.replace(/-/g, '+').replace(/_/g, '/').padEnd(Math.ceil(text.length / 4) * 4, '=');
  const binary = atob(base64);
  const bytes = new Uint8Array(binary.length);
  for (let index = 0; index < binary.length; index += 1) bytes[index] = binary.charCodeAt(index);
  return bytes;
}

/** The thread a notification click asked for (`#thread=<id>`), taken out of the URL; null when there is none. */
export function takeThreadFromURL(scope = globalThis) {
  const match = /^#thread=([^&]+)$/.exec(scope.location?.hash ?? '');
  if (!match) return null;
  scope.history?.replaceState(null, '', scope.location.pathname + scope.location.search);
  try {
    return decodeURIComponent(match[1]);
  } catch {
    return null;
  }
}

function storedDevice() {
  return sessionStorage.getItem(DEVICE_KEY);
}

/** Forgets this browser's device id (the session ended without a sign-out here: the server dropped the device). */
export function forgetPushDevice() {
  sessionStorage.removeItem(DEVICE_KEY);
}

/** Draws the toggle: shown to a signed-in user whose browser can take pushes; pressed while this browser is registered. */
export function renderPush() {
  const button = byId('push-toggle');
  const on = Boolean(storedDevice());
  show(button, Boolean(state.me) && pushSupported());
  button.setAttribute('aria-pressed', String(on));
  button.dataset.state = on ? 'on' : 'off';
  button.disabled = busy;
  button.textContent = t(on ? 'pushOn' : 'pushOff');
}

function said(key) {
  const text = t(key);
  byId('push-toggle').title = text;
  byId('push-toggle').dataset.message = key;
  announce(text);
}

/** Subscribes this browser and registers it as a device (a click's work: the permission prompt needs one). */
export async function enablePush() {
  if (busy || !pushSupported()) return;
  busy = true;
  renderPush();
  try {
    const permission = await Notification.requestPermission();
    if (permission !== 'granted') return said('pushBlocked');
    if (!state.client) return;
    const registration = await navigator.serviceWorker.register(WORKER_URL, { scope: SCOPE });
    let key;
    try {
      key = (await state.client.api('GET', '/v1/push/vapid-public-key')).key;
    } catch (error) {
      return said(error.code === 'push_not_configured' ? 'pushUnavailable' : 'pushFailed');
    }
    await navigator.serviceWorker.ready;
    const subscription = await registration.pushManager.getSubscription()
      ?? await registration.pushManager.subscribe({ userVisibleOnly: true, applicationServerKey: base64UrlToBytes(key) });
    const device = await state.client.api('POST', '/v1/me/devices', { platform: 'webpush', subscription: subscription.toJSON() });
    sessionStorage.setItem(DEVICE_KEY, device.id);
    said('pushEnabled');
  } catch (error) {
    console.warn('push', error);
    said('pushFailed');
  } finally {
    busy = false;
    renderPush();
  }
}

/**
 * Removes this browser's device through `client` (the SpotterClient of the session that registered it) and
 * unsubscribes the browser. Sign-out calls it before the session ends; a failure is logged and forgotten (the
 * server drops the session's devices at sign-out anyway).
 */
export async function disablePush(client = state.client) {
  const id = storedDevice();
  sessionStorage.removeItem(DEVICE_KEY);
  try {
    if (id && client) await client.api('DELETE', `/v1/me/devices/${encodeURIComponent(id)}`).catch((error) => {
      if (error.code !== 'not_found') throw error;
    });
    const registration = pushSupported() ? await navigator.serviceWorker.getRegistration(SCOPE) : undefined;
    const subscription = await registration?.pushManager.getSubscription();
    await subscription?.unsubscribe();
  } catch (error) {
    console.warn('push', error);
  }
}

/**
 * Wires the toggle and the worker's messages; `openThread(id)` shows a conversation when a notification of it is
 * clicked while the console is open.
 */
export function wirePush(openThread) {
  byId('push-toggle').addEventListener('click', async () => {
    if (storedDevice()) {
      busy = true;
      renderPush();
      await disablePush();
      busy = false;
      said('pushDisabled');
      renderPush();
    } else {
      await enablePush();
    }
  });
  // A notification's URL followed while the console is open in this tab only changes the fragment.
  addEventListener('hashchange', () => {
    const threadId = takeThreadFromURL();
    if (threadId) openThread(threadId);
  });
  if (pushSupported()) {
    navigator.serviceWorker.addEventListener('message', (event) => {
      const message = event.data;
      if (message?.type === 'spotter.open_thread' && typeof message.thread_id === 'string') openThread(message.thread_id);
    });
    navigator.serviceWorker.startMessages();
  }
}
