// Spotter's JavaScript client: one ES module for web apps and React Native, no build step, no dependencies.
//
// It owns the live socket so an app does not have to get the subtle parts right:
//   - connects to /v1/ws with the access token (query parameter: browsers cannot set headers) and `spotter.v1`;
//   - reconnects with full jitter, or after the server's `retry_after_ms` when it restarts; 4003 (session revoked)
//     or 4004 (account erased) stops it, 4001 (token lapsed) refreshes the tokens first; a connect that reaches no `hello` within
//     `connectTimeoutMs` (10 s), or that fails with an `error` and no `close` (Node 20's WebSocket on a refused
//     connect), is a failed attempt like any other and is retried with the same backoff;
//   - resumes from the last processed cursor (`?cursor=`), drops events it has already delivered, and hands each
//     new cursor to `onCursor` so the app can persist it;
//   - keeps every send until the server acknowledges it and sends it again after a reconnect with the same
//     `client_message_id`, so a message is stored once and its promise resolves once;
//   - answers `auth.expiring` with `auth.refresh` (or the app's own `refresh` callback) and hands new tokens to
//     `onTokens`.
// Commands return promises resolved with the reply's `result`, or rejected with a `SpotterError` carrying the
// server's typed error (`code`, `message` in the user's language, `field`, `retryAfter`).
//
// The wire contract is Protocol/README.md; the types are in spotter.d.ts beside this file.

/** The protocol this client speaks. */
export const PROTOCOL = 'spotter.v1';

/** Error codes of a send that is worth sending again, with the same client_message_id, after a pause. */
const RETRYABLE = new Set(['rate_limited', 'server_busy', 'unavailable', 'internal_error']);

/** A typed error from the server (or `connection_lost` / `closed` / `timeout` from this client). */
export class SpotterError extends Error {
  constructor(error, status) {
    super(error?.message ?? String(error?.code ?? 'error'));
    this.name = 'SpotterError';
    this.code = error?.code ?? 'error';
    this.field = error?.field;
    this.retryAfter = error?.retry_after;
    this.status = status;
  }
}

/** Seconds-since-1970 expiry of a JWT access token, or undefined if it cannot be read. */
export function tokenExpiry(token) {
  try {
    const part = String(token).split('.')[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = part + '='.repeat((4 - (part.length % 4)) % 4);
    const json = typeof atob === 'function' ? atob(padded) : globalThis.Buffer.from(padded, 'base64').toString('binary');
    return JSON.parse(json).exp;
  } catch {
    return undefined;
  }
}

/** The delay before reconnect attempt `attempt` (0-based): full jitter over an exponential ceiling. */
export function backoffDelay(attempt, { minDelayMs = 250, maxDelayMs = 30000, random = Math.random } = {}) {
  const ceiling = Math.min(maxDelayMs, minDelayMs * 2 ** Math.min(attempt, 16));
  return Math.floor(random() * ceiling);
}

/** The `retry_after_ms=N` a restarting server puts in its close reason, or undefined. */
export function retryAfterFromReason(reason) {
  const match = /retry_after_ms=(\d+)/.exec(reason ?? '');
  return match ? Number(match[1]) : undefined;
}

let instances = 0;

export class SpotterClient {
  /**
   * @param {object} options see spotter.d.ts (`SpotterClientOptions`)
   */
  constructor(options = {}) {
    const base = options.url ?? globalThis.location?.origin;
    if (!base) throw new TypeError('SpotterClient: `url` (the server, e.g. https://chat.example.com) is required');
    this.url = String(base).replace(/\/+$/, '');
    this.accessToken = options.accessToken;
    this.refreshToken = options.refreshToken;
    this.cursor = options.cursor ?? undefined;
    this.language = options.language;
    this.options = options;
    this.WebSocket = options.WebSocket ?? globalThis.WebSocket;
    this.fetch = options.fetch ?? globalThis.fetch?.bind(globalThis);
    this.random = options.random ?? Math.random;
    this.commandTimeoutMs = options.commandTimeoutMs ?? 15000;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 10000;
    this.state = 'idle';
    this.listeners = new Map();
    this.pending = new Map(); // command id -> {resolve, reject, timer, send?}
    this.outbox = new Map(); // client_message_id -> {threadId, fields, resolve, reject, inFlight}
    this.waiting = []; // commands made while not live: sent once live
    this.attempt = 0;
    this.nextId = 1;
    this.prefix = `${Date.now().toString(36)}-${(++instances).toString(36)}-${Math.floor(this.random() * 1e9).toString(36)}`;
    this.socket = null;
    this.timer = null;
    this.connectTimer = null;
    this.wanted = false;
  }

  // MARK: - Events

  /** Listens for events of `type` (`message`, `receipt`, `presence`, …, or `*` for every event); returns a function that stops. */
  on(type, listener) {
    if (!this.listeners.has(type)) this.listeners.set(type, new Set());
    this.listeners.get(type).add(listener);
    return () => this.off(type, listener);
  }

  off(type, listener) {
    this.listeners.get(type)?.delete(listener);
  }

  emit(type, event) {
    for (const key of [type, '*']) {
      for (const listener of [...(this.listeners.get(key) ?? [])]) {
        try {
          listener(event);
        } catch (error) {
          // One broken listener must not stop the others or the connection.
          setTimeout(() => { throw error; });
        }
      }
    }
  }

  setState(state, detail) {
    if (this.state === state) return;
    this.state = state;
    this.emit('state', { type: 'state', state, ...detail });
  }

  // MARK: - The connection

  /** Opens the socket and keeps it open until `close()` (or the session is revoked). */
  connect() {
    this.wanted = true;
    if (this.socket || this.timer) return;
    this.open();
  }

  /** Closes the socket for good: nothing reconnects; unacknowledged sends are rejected with `closed`. */
  close() {
    this.wanted = false;
    clearTimeout(this.timer);
    clearTimeout(this.connectTimer);
    this.timer = this.connectTimer = null;
    const socket = this.socket;
    this.socket = null;
    if (socket) discard(socket, 1000, 'bye');
    this.failPending(new SpotterError({ code: 'closed', message: 'The client was closed.' }), true);
    this.setState('closed');
  }

  async open() {
    this.timer = null;
    if (!this.wanted) return;
    this.setState('connecting');
    // A token that has expired (or will within 2 s) is refreshed before it is refused.
    const expiry = tokenExpiry(this.accessToken);
    if (expiry !== undefined && expiry - Date.now() / 1000 < 2 && this.refreshToken) {
      try {
        await this.refreshOverHTTP();
      } catch (error) {
        if (error instanceof SpotterError && error.status && error.status < 500) return this.stop('signed_out', error);
        return this.retryLater();
      }
    }
    if (!this.wanted) return;
    const ws = this.url.replace(/^http/, 'ws');
    const query = new URLSearchParams({ access_token: this.accessToken ?? '' });
    if (this.cursor !== undefined) query.set('cursor', String(this.cursor));
    let socket;
    try {
      socket = new this.WebSocket(`${ws}/v1/ws?${query}`, [PROTOCOL]);
    } catch (error) {
      return this.retryLater();
    }
    this.socket = socket;
    this.greeted = false;
    this.replaying = this.cursor !== undefined;
    socket.onmessage = (message) => this.receive(message.data);
    socket.onclose = (event) => this.closed(socket, event.code, event.reason);
    // A browser fires `close` right after `error`; Node 20's WebSocket may fire only `error` (a refused connect).
    // Either way the attempt has failed once: whichever comes first ends it, the other finds it over.
    socket.onerror = () => setTimeout(() => this.closed(socket, 1006, ''), 0);
    // A connect with no hello in time (a server that accepts and never answers) is given up and retried.
    clearTimeout(this.connectTimer);
    this.connectTimer = setTimeout(() => {
      if (socket !== this.socket || this.greeted) return;
      this.emit('connect_timeout', { type: 'connect_timeout', timeoutMs: this.connectTimeoutMs });
      this.closed(socket, 1006, 'connect timeout', { timedOut: true });
    }, this.connectTimeoutMs);
  }

  /** The end of `socket` (closed, failed, or given up): at most once per socket, whatever reports it. */
  closed(socket, code, reason, { timedOut = false } = {}) {
    if (socket !== this.socket) return;
    this.socket = null;
    clearTimeout(this.connectTimer);
    this.connectTimer = null;
    discard(socket);
    const heard = this.state === 'live' || this.state === 'replaying';
    this.failPending(new SpotterError({ code: 'connection_lost', message: 'The connection was lost before the reply.' }), false);
    for (const entry of this.outbox.values()) entry.inFlight = false;
    this.emit('disconnect', { type: 'disconnect', code, reason });
    if (!this.wanted) return this.setState('closed');
    if (code === 4003 || code === 4004) return this.stop('revoked');  // 4004: the account was erased
    if (timedOut) return this.retryLater();
    if (!this.greeted && code !== 1001) {
      // Refused before the hello (a browser shows a refused upgrade as 1006): ask over HTTP why.
      return this.probe();
    }
    if (code === 4001) {
      // The token lapsed: refresh, then reconnect at once.
      this.setState('waiting');
      return this.refreshOverHTTP().then(() => this.open(), (error) =>
        error instanceof SpotterError && error.status && error.status < 500 ? this.stop('signed_out', error) : this.retryLater());
    }
    if (heard) this.attempt = 0;
    this.retryLater(retryAfterFromReason(reason));
  }

  /** After a refused connect: a revoked session stops, an expired token is refreshed, anything else waits and retries. */
  async probe() {
    this.setState('waiting');
    try {
      await request(this, 'GET', '/v1/me', undefined, this.accessToken, this.connectTimeoutMs);
    } catch (error) {
      if (error.code === 'session_revoked') return this.stop('revoked', error);
      if (error.code === 'token_expired' || error.code === 'unauthorized') {
        try {
          await this.refreshOverHTTP();
          return this.retryLater(0);
        } catch (refusal) {
          if (refusal instanceof SpotterError && refusal.status && refusal.status < 500) return this.stop('signed_out', refusal);
        }
      }
    }
    this.retryLater();
  }

  /** Schedules the next connect: after `delay` ms when the server said so, else full jitter. */
  retryLater(delay) {
    if (!this.wanted || this.timer) return;
    const wait = delay ?? backoffDelay(this.attempt, { ...this.options, random: this.random });
    this.attempt += 1;
    this.setState('waiting', { retryInMs: wait });
    this.timer = setTimeout(() => this.open(), wait);
  }

  stop(why, error) {
    this.wanted = false;
    this.failPending(new SpotterError({ code: why, message: error?.message ?? 'Sign in again.' }), true);
    this.setState('closed', { reason: why });
    this.emit(why, { type: why, error });
  }

  failPending(error, outboxToo) {
    for (const [id, entry] of this.pending) {
      clearTimeout(entry.timer);
      if (!entry.send) entry.reject(error);
      this.pending.delete(id);
    }
    if (outboxToo) {
      for (const entry of this.outbox.values()) entry.reject(error);
      this.outbox.clear();
      for (const entry of this.waiting) entry.reject(error);
      this.waiting = [];
    }
  }

  // MARK: - Frames in

  receive(data) {
    let frame;
    try {
      frame = JSON.parse(typeof data === 'string' ? data : new TextDecoder().decode(data));
    } catch {
      return;
    }
    if (frame.type === 'reply') return this.reply(frame);
    switch (frame.type) {
      case 'hello':
        this.greeted = true;
        clearTimeout(this.connectTimer);
        this.connectTimer = null;
        this.user = frame.user;
        this.expiresAt = frame.expires_at;
        this.helloCursor = frame.cursor;
        if (this.cursor === undefined) this.cursor = frame.cursor; // a first connect: nothing to replay
        this.emit('hello', frame);
        if (!this.replaying) this.goLive();
        else this.setState('replaying');
        return;
      case 'live':
        this.advance(frame.cursor);
        this.replaying = false;
        this.emit('live', frame);
        return this.goLive();
      case 'auth.expiring':
        this.emit('auth.expiring', frame);
        return void this.refreshOnSocket();
    }
    if (typeof frame.cursor === 'number') {
      // A logged event: drop it if it was delivered already (a replay may repeat live events).
      if (this.cursor !== undefined && frame.cursor <= this.cursor) return;
      this.advance(frame.cursor);
    }
    this.emit(frame.type, frame);
  }

  advance(cursor) {
    if (typeof cursor !== 'number' || (this.cursor !== undefined && cursor <= this.cursor)) return;
    this.cursor = cursor;
    this.options.onCursor?.(cursor);
  }

  reply(frame) {
    if (frame.id === null) {
      // About the connect itself: a cursor the server cannot resume.
      const error = new SpotterError(frame.error);
      if (error.code === 'cursor_expired' || error.code === 'out_of_range') {
        // Start again from where the server is now (the app reloads threads and history on `reset`).
        this.replaying = false;
        this.cursor = this.helloCursor;
        this.options.onCursor?.(this.cursor);
        this.emit('reset', { type: 'reset', error });
        this.goLive();
      } else {
        this.emit('error', { type: 'error', error });
      }
      return;
    }
    const entry = this.pending.get(frame.id);
    if (!entry) return;
    this.pending.delete(frame.id);
    clearTimeout(entry.timer);
    if (frame.ok) return entry.resolve(frame.result);
    entry.reject(new SpotterError(frame.error));
  }

  goLive() {
    this.setState('live');
    this.attempt = 0;
    const waiting = this.waiting;
    this.waiting = [];
    for (const entry of waiting) this.transmit(entry);
    for (const [clientMessageId, entry] of this.outbox) if (!entry.inFlight) this.transmitSend(clientMessageId, entry);
  }

  // MARK: - Commands

  /** Sends command `type` with `fields`; resolves with its result. Waits for the connection when there is none. */
  command(type, fields = {}) {
    return new Promise((resolve, reject) => {
      const entry = { type, fields, resolve, reject };
      if (this.state === 'live' && this.socket) this.transmit(entry);
      else if (this.wanted) this.waiting.push(entry);
      else reject(new SpotterError({ code: 'closed', message: 'Call connect() first.' }));
    });
  }

  /**
   * The free starts of a session of `durationMinutes` with the other side of `threadId`, in [from, to) (Unix
   * seconds), `stepMinutes` apart (default 15), each with its local time in `timeZone` (default: the account's
   * zone): `availability.slots`. The coach's hours are saved with `command('availability.set', …)`.
   */
  freeSlots(threadId, { durationMinutes, from, to, stepMinutes, timeZone } = {}) {
    const fields = { thread_id: threadId, duration_minutes: durationMinutes, from, to };
    if (stepMinutes !== undefined) fields.step_minutes = stepMinutes;
    if (timeZone !== undefined) fields.time_zone = timeZone;
    return this.command('availability.slots', fields);
  }

  transmit(entry) {
    const id = `c${this.nextId++}`;
    const timer = setTimeout(() => {
      if (!this.pending.delete(id)) return;
      entry.reject(new SpotterError({ code: 'timeout', message: 'No reply in time.' }));
    }, this.commandTimeoutMs);
    this.pending.set(id, { resolve: entry.resolve, reject: entry.reject, timer, send: entry.send });
    try {
      this.socket.send(JSON.stringify({ ...entry.fields, id, type: entry.type }));
    } catch {
      // The close handler fails or resends it.
    }
  }

  /**
   * Sends a message to a thread: `body` is `{text}` or `{kind: 'meal_log', meal}`. The message is kept until the
   * server acknowledges it (it is durable then) and sent again after reconnects with the same client_message_id.
   * Resolves once, with the stored message.
   */
  send(threadId, body, { clientMessageId } = {}) {
    const id = clientMessageId ?? `${this.prefix}-${this.nextId++}`;
    const existing = this.outbox.get(id);
    if (existing) return existing.promise;
    let resolve, reject;
    const promise = new Promise((yes, no) => { resolve = yes; reject = no; });
    const entry = { threadId, fields: { ...body, thread_id: threadId, client_message_id: id }, resolve, reject, inFlight: false, promise };
    this.outbox.set(id, entry);
    this.emit('outbox', { type: 'outbox', pending: this.outbox.size });
    if (this.state === 'live' && this.socket) this.transmitSend(id, entry);
    return promise;
  }

  transmitSend(clientMessageId, entry) {
    entry.inFlight = true;
    const done = (settle) => (value) => {
      if (this.outbox.get(clientMessageId) !== entry) return;
      this.outbox.delete(clientMessageId);
      this.emit('outbox', { type: 'outbox', pending: this.outbox.size });
      settle(value);
    };
    this.transmit({
      type: 'message.send', fields: entry.fields, send: true,
      resolve: done(entry.resolve),
      reject: (error) => {
        entry.inFlight = false;
        if (error.code === 'connection_lost') return; // sent again on the next connect
        if (error.code === 'timeout') {
          if (this.state === 'live' && this.socket) this.transmitSend(clientMessageId, entry);
          return;
        }
        if (RETRYABLE.has(error.code)) {
          const wait = Math.max(1, error.retryAfter ?? 1) * 1000;
          setTimeout(() => { if (this.outbox.get(clientMessageId) === entry && this.state === 'live' && !entry.inFlight) this.transmitSend(clientMessageId, entry); }, wait);
          return;
        }
        done(entry.reject)(error);
      },
    });
  }

  /** Unacknowledged sends, oldest first: `{clientMessageId, threadId, body}`. */
  get unacknowledged() {
    return [...this.outbox].map(([clientMessageId, entry]) => ({ clientMessageId, threadId: entry.threadId, body: entry.fields }));
  }

  // MARK: - Tokens

  setTokens(session) {
    this.accessToken = session.access_token;
    this.refreshToken = session.refresh_token;
    this.options.onTokens?.({ accessToken: this.accessToken, refreshToken: this.refreshToken, user: session.user });
  }

  /** `auth.expiring`: rotate the tokens on the socket (which extends it), or through the app's `refresh`. */
  async refreshOnSocket() {
    if (this.refreshing) return;
    this.refreshing = true;
    try {
      if (this.options.refresh) {
        const tokens = await this.options.refresh(this.refreshToken);
        this.accessToken = tokens.accessToken ?? tokens.access_token;
        this.refreshToken = tokens.refreshToken ?? tokens.refresh_token;
        // The socket lives as long as the token it opened with: reopen with the new one (resuming, nothing lost).
        this.socket?.close(1000, 'new token');
        return;
      }
      const result = await this.command('auth.refresh', { refresh_token: this.refreshToken });
      this.expiresAt = result.expires_at;
      this.setTokens(result.session);
    } catch (error) {
      this.emit('error', { type: 'error', error });
    } finally {
      this.refreshing = false;
    }
  }

  async refreshOverHTTP() {
    if (this.options.refresh) {
      const tokens = await this.options.refresh(this.refreshToken);
      this.accessToken = tokens.accessToken ?? tokens.access_token;
      this.refreshToken = tokens.refreshToken ?? tokens.refresh_token;
      return;
    }
    const session = await request(this, 'POST', '/v1/auth/refresh', { refresh_token: this.refreshToken }, null);
    this.setTokens(session);
  }

  // MARK: - HTTP

  /** Calls the HTTP API with this client's token (refreshing it once when it has expired). */
  async api(method, path, body) {
    try {
      return await request(this, method, path, body, this.accessToken);
    } catch (error) {
      if (error instanceof SpotterError && error.code === 'token_expired' && this.refreshToken) {
        await this.refreshOverHTTP();
        return request(this, method, path, body, this.accessToken);
      }
      throw error;
    }
  }

  /** Signs in with email and password: `{access_token, refresh_token, user, …}`. */
  static signIn(url, email, password, options = {}) {
    return request({ url, ...options }, 'POST', '/v1/auth/signin', { email, password }, null);
  }

  /** Asks for a sign-in code by SMS. */
  static requestCode(url, phone, options = {}) {
    return request({ url, ...options }, 'POST', '/v1/auth/otp/request', { phone }, null);
  }

  /** Signs in with the code. */
  static verifyCode(url, phone, code, options = {}) {
    return request({ url, ...options }, 'POST', '/v1/auth/otp/verify', { phone, code }, null);
  }
}

/** Stops listening to a socket this client is done with, and closes it if it is not closed yet. */
function discard(socket, code, reason) {
  socket.onclose = socket.onmessage = socket.onerror = socket.onopen = null;
  try {
    if (socket.readyState === undefined || socket.readyState < 2) socket.close(code, reason);
  } catch { /* already closed */ }
}

/**
 * One HTTP call: resolves with the JSON body (or null), rejects with a SpotterError (`connection_lost` when the
 * server cannot be reached, or does not answer within `timeoutMs` when one is given).
 */
async function request(client, method, path, body, token, timeoutMs) {
  const fetcher = client.fetch ?? globalThis.fetch;
  const headers = {};
  if (body !== undefined && body !== null) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  if (client.language) headers['Accept-Language'] = client.language;
  const abort = timeoutMs !== undefined && typeof AbortController === 'function' ? new AbortController() : undefined;
  const timer = abort && setTimeout(() => abort.abort(), timeoutMs);
  let response;
  try {
    response = await fetcher(`${String(client.url).replace(/\/+$/, '')}${path}`, {
      method, headers, body: body === undefined || body === null ? undefined : JSON.stringify(body), signal: abort?.signal,
    });
  } catch (error) {
    throw new SpotterError({ code: 'connection_lost', message: String(error?.message ?? error) });
  } finally {
    clearTimeout(timer);
  }
  const text = await response.text();
  const json = text ? safeJSON(text) : null;
  if (!response.ok) throw new SpotterError(json?.error ?? { code: 'http_' + response.status, message: text }, response.status);
  return json;
}

function safeJSON(text) {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
