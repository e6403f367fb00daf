// The JavaScript client (Protocol/clients/js/spotter.js) against a live Spotter process: chat, a kill -9 in the
// middle of a burst of sends, token refresh, and the error paths. Run: node --test Tests/js/ (SPOTTER_BIN names
// the server binary; the default is .build/debug/spotter).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpotterClient, SpotterError, backoffDelay, retryAfterFromReason, tokenExpiry } from '../../Protocol/clients/js/spotter.js';
import { NodeWebSocket } from '../../Protocol/clients/js/node-websocket.js';
import { SpotterProcess, until, sleep } from './support/server.js';
import net from 'node:net';

function connect(server, who, extra = {}) {
  const client = new SpotterClient({
    url: server.url, accessToken: who.access, refreshToken: who.refresh, WebSocket: NodeWebSocket,
    minDelayMs: 50, maxDelayMs: 400, ...extra,
  });
  client.connect();
  return client;
}

const live = (client) => until(() => client.state === 'live', `${client.user?.full_name ?? 'a client'} live`);

async function withServer(args, body) {
  const server = new SpotterProcess({ args });
  await server.start();
  const clients = [];
  try {
    await body(server, (who, extra) => {
      const client = connect(server, who, extra);
      clients.push(client);
      return client;
    });
  } finally {
    for (const client of clients) client.close();
    await server.cleanup();
  }
}

test('the reconnect delay is full jitter under a growing ceiling; a restart names its own delay', () => {
  assert.equal(backoffDelay(0, { random: () => 0 }), 0);
  assert.equal(backoffDelay(0, { minDelayMs: 250, random: () => 0.999 }), 249);
  assert.equal(backoffDelay(3, { minDelayMs: 250, random: () => 0.5 }), 1000);
  assert.equal(backoffDelay(30, { minDelayMs: 250, maxDelayMs: 30000, random: () => 0.999 }), 29970);
  assert.equal(retryAfterFromReason('server restarting; retry_after_ms=2500'), 2500);
  assert.equal(retryAfterFromReason('idle timeout'), undefined);
  const payload = Buffer.from(JSON.stringify({ exp: 1795309633, sub: 'u' })).toString('base64url');
  assert.equal(tokenExpiry(`h.${payload}.s`), 1795309633);
  assert.equal(tokenExpiry('not a token'), undefined);
});

test('chat: an acked send, the peer gets it once, receipts come back; errors are typed', async () => {
  await withServer([], async (server, open) => {
    const { coach, client, thread } = await server.pair();
    const coachSide = open(coach);
    const clientSide = open(client);
    const coachGot = [], clientReceipts = [];
    coachSide.on('message', (event) => coachGot.push(event.message));
    clientSide.on('receipt', (event) => clientReceipts.push(event));
    await Promise.all([live(coachSide), live(clientSide)]);

    const stored = await clientSide.send(thread, { text: 'مرحبا coach' });
    assert.equal(stored.seq, 1);
    assert.equal(stored.text, 'مرحبا coach');
    await until(() => coachGot.length === 1, 'the coach to get the message');
    assert.equal(coachGot[0].client_message_id, stored.client_message_id);

    const read = await coachSide.command('thread.read', { thread_id: thread, seq: 1 });
    assert.equal(read.unread, 0);
    await until(() => clientReceipts.some((receipt) => receipt.read_seq === 1), 'the ✓✓ receipt');

    // The app goes to the background on a socket it keeps (pushes reach its devices meanwhile), then comes back.
    assert.deepEqual(await clientSide.command('app_state', { state: 'background' }), { state: 'background' });
    assert.deepEqual(await clientSide.command('app_state', { state: 'foreground' }), { state: 'foreground' });
    await assert.rejects(clientSide.command('app_state', { state: 'asleep' }), { code: 'bad_request', field: 'state' });

    // The same client_message_id again is the same message, not a new one.
    const again = await clientSide.send(thread, { text: 'مرحبا coach' }, { clientMessageId: stored.client_message_id });
    assert.equal(again.seq, 1);

    // Errors: a command, a send, HTTP. A refused send leaves the outbox.
    await assert.rejects(clientSide.command('teleport'), (error) => error instanceof SpotterError && error.code === 'unknown_command');
    await assert.rejects(clientSide.send(thread, { text: 'x'.repeat(1001) }), { code: 'message_too_long', field: 'text' });
    await assert.rejects(clientSide.send('not-a-thread', { text: 'hi' }), { code: 'forbidden' });
    assert.equal(clientSide.unacknowledged.length, 0);
    await assert.rejects(clientSide.command('history', { thread_id: thread, colour: 'red' }), { code: 'unknown_field', field: 'colour' });
    await assert.rejects(clientSide.api('GET', '/v1/clients/nobody/profile'), (error) => error.code === 'forbidden' && error.status === 403);
    assert.equal((await clientSide.api('GET', '/v1/me')).id, client.id);
    await assert.rejects(SpotterClient.signIn(server.url, 'client-a@example.com', 'wrong-password'), { code: 'invalid_credentials', status: 401 });
  });
});

test('a daily check-in reaches the coach live (record and client_card); goals refuse a second without replace', async () => {
  await withServer([], async (server, open) => {
    const { coach, client, thread } = await server.pair('daily');
    const coachSide = open(coach);
    const clientSide = open(client);
    const records = [], cards = [];
    coachSide.on('record', (event) => records.push(event));
    coachSide.on('client_card', (event) => cards.push(event.card));
    await Promise.all([live(coachSide), live(clientSide)]);

    const made = await clientSide.command('daily_check_in.submit', { thread_id: thread, mood: 5, soreness: 1, stress: 1 });
    assert.equal(made.change, 'daily_check_in.created');
    assert.equal(made.daily_check_in.overall_score, 100);
    await until(() => records.some((event) => event.change === 'daily_check_in.created'), 'the record event at the coach');
    await until(() => cards.some((card) => card.daily_check_in?.id === made.daily_check_in.id && card.checked_in_today === true),
      'the client card with the check-in');
    const again = await clientSide.command('daily_check_in.submit', { thread_id: thread, mood: 3, soreness: 3, stress: 3, sick: true });
    assert.equal(again.change, 'daily_check_in.updated');
    assert.equal(again.daily_check_in.id, made.daily_check_in.id);
    assert.equal(again.daily_check_in.overall_score, 25);
    const history = await coachSide.command('daily_check_ins', { thread_id: thread });
    assert.deepEqual(history.check_ins.map((item) => item.overall_score), [25]);
    assert.equal(history.next, null);
    await assert.rejects(clientSide.command('daily_check_in.submit', { thread_id: thread, mood: 6, soreness: 1, stress: 1 }),
      { code: 'out_of_range', field: 'mood' });
    await assert.rejects(coachSide.command('daily_check_in.submit', { thread_id: thread, mood: 3, soreness: 3, stress: 3 }),
      { code: 'forbidden' });

    await clientSide.command('measurement.add', { thread_id: thread, method: 'navy', sex: 'female', height_cm: 165,
      neck_cm: 34, waist_cm: 80, hip_cm: 100 });
    const goal = await clientSide.command('goal.set', { thread_id: thread, kind: 'cutting', target_percent: 25, weight_kg: 70, age: 30 });
    assert.equal(goal.goal.plan.activity, 'light');
    assert.ok(goal.goal.plan.weeks > 0 && goal.goal.plan.milestones.length === goal.goal.plan.weeks);
    await assert.rejects(clientSide.command('goal.set', { thread_id: thread, kind: 'cutting', target_percent: 26 }),
      { code: 'goal_active', field: 'replace' });
    const replaced = await clientSide.command('goal.set', { thread_id: thread, kind: 'cutting', target_percent: 26, replace: true });
    assert.equal(replaced.change, 'goal.replaced');
  });
});

test('errors come in Arabic when the socket asked for Arabic', async () => {
  await withServer([], async (server, open) => {
    const { client } = await server.pair();
    NodeWebSocket.extraHeaders = { 'Accept-Language': 'ar' };
    try {
      const side = open(client);
      await live(side);
      const error = await side.command('teleport').catch((refusal) => refusal);
      assert.equal(error.code, 'unknown_command');
      assert.match(error.message, /[\u0600-\u06FF]/);
    } finally {
      NodeWebSocket.extraHeaders = {};
    }
  });
});

test('kill -9 in the middle of a burst: every send is stored once and the peer gets each message once', async () => {
  await withServer([], async (server, open) => {
    const { coach, client, thread } = await server.pair();
    const coachSide = open(coach);
    const clientSide = open(client);
    const seen = [];
    coachSide.on('message', (event) => seen.push(event.message.seq));
    await Promise.all([live(coachSide), live(clientSide)]);

    const total = 200, frozenAt = 150;
    let settled = 0;
    const results = [];
    const sends = [];
    const sendOne = (i) => sends.push(clientSide.send(thread, { text: `burst ${i}` }).then((message) => {
      settled += 1;
      results[i] = message;
    }));
    for (let i = 0; i < frozenAt; i++) sendOne(i);
    // Some acked, many not yet. The server freezes (SIGSTOP), so the next sends are surely on the wire with no
    // answer, then dies without a word (kill -9).
    await until(() => settled >= 40, 'the first acks');
    process.kill(server.child.pid, 'SIGSTOP');
    for (let i = frozenAt; i < total; i++) sendOne(i);
    await sleep(200);
    await server.kill();
    const ackedBeforeKill = settled;
    assert.ok(ackedBeforeKill <= frozenAt, 'a frozen server acked');
    await sleep(300);
    await server.start();
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`only ${settled}/${total} acked`)), 60000); });
    await Promise.race([Promise.all(sends), timeout]).finally(() => clearTimeout(timer));

    // Each send resolved once, with its own message; seq 1..total with no gap and no duplicate.
    assert.equal(settled, total);
    const seqs = results.map((message) => message.seq).sort((a, b) => a - b);
    assert.deepEqual(seqs, Array.from({ length: total }, (_, i) => i + 1));
    assert.deepEqual(results.map((message) => message.text), Array.from({ length: total }, (_, i) => `burst ${i}`));
    // The coach's app saw each message exactly once (live, or replayed by the resume after the restart).
    await until(() => new Set(seen).size === total, `the coach to see all ${total} (saw ${new Set(seen).size})`);
    assert.equal(seen.length, total, `duplicates reached the coach's app: ${seen.length - total}`);
    assert.equal(clientSide.unacknowledged.length, 0);
  });
});

test('auth.expiring is answered with auth.refresh: the socket outlives its first token', async () => {
  await withServer(['--access-token-lifetime', '6'], async (server, open) => {
    const { client, thread } = await server.pair();
    const tokens = [];
    let disconnects = 0;
    const side = open(client, { onTokens: (fresh) => tokens.push(fresh) });
    side.on('disconnect', () => { disconnects += 1; });
    await live(side);
    const started = Date.now();
    await until(() => tokens.length >= 1, 'new tokens', 10000);
    assert.notEqual(tokens[0].accessToken, client.access);
    assert.notEqual(tokens[0].refreshToken, client.refresh);
    // Past the first token's life, the same socket still works.
    await sleep(Math.max(0, 7000 - (Date.now() - started)));
    assert.equal((await side.send(thread, { text: 'still here' })).seq, 1);
    assert.equal(disconnects, 0);
    // The old refresh token was rotated away.
    const reused = await server.call('POST', '/v1/auth/refresh', { refresh_token: client.refresh });
    assert.equal(reused.json.error.code, 'refresh_token_reused');
  });
});

test("the app's own refresh callback: new tokens, a reconnect that resumes, nothing lost", async () => {
  await withServer(['--access-token-lifetime', '6'], async (server, open) => {
    const { coach, client, thread } = await server.pair();
    let calls = 0;
    const refresh = async (refreshToken) => {
      calls += 1;
      const { json } = await server.call('POST', '/v1/auth/refresh', { refresh_token: refreshToken });
      return { accessToken: json.access_token, refreshToken: json.refresh_token };
    };
    const side = open(client, { refresh });
    const coachSide = open(coach, {});
    const got = [];
    side.on('message', (event) => got.push(event.message.seq));
    await Promise.all([live(side), live(coachSide)]);
    await until(() => calls >= 1, 'the refresh callback', 10000);
    await coachSide.send(thread, { text: 'after the refresh' });
    await until(() => got.includes(1), 'the message on the refreshed socket', 10000);
    assert.deepEqual(got, [1]);
    assert.notEqual(side.accessToken, client.access);
  });
});

test('a revoked session stops the client: no reconnect loop, pending commands fail', async () => {
  await withServer([], async (server, open) => {
    const { client } = await server.pair();
    const side = open(client);
    let revoked = 0;
    side.on('revoked', () => { revoked += 1; });
    await live(side);
    const signOut = await server.call('POST', '/v1/auth/signout', { refresh_token: client.refresh });
    assert.equal(signOut.status, 204);
    await until(() => revoked === 1 && side.state === 'closed', 'the revocation');
    await assert.rejects(side.command('me'), { code: 'closed' });
    await sleep(500);
    assert.equal(revoked, 1);
    assert.equal(side.state, 'closed');
  });
});

test('an erased account stops the client at once (4004), without a reconnect', async () => {
  await withServer([], async (server, open) => {
    const { client } = await server.pair();
    const side = open(client);
    const closes = [];
    let revoked = 0;
    side.on('revoked', () => { revoked += 1; });
    side.on('disconnect', (event) => closes.push(event.code));
    await live(side);
    const erased = await server.call('DELETE', '/v1/me', { password: 'secret1' }, client.access);
    assert.equal(erased.status, 204);
    await until(() => revoked === 1 && side.state === 'closed', 'the erasure');
    await sleep(500);
    assert.deepEqual(closes, [4004]);
    assert.equal(revoked, 1);
  });
});

test('a refused connect with a revoked token stops too (a browser sees only 1006)', async () => {
  await withServer([], async (server, open) => {
    const { client } = await server.pair();
    await server.call('POST', '/v1/auth/signout', { refresh_token: client.refresh });
    const side = open(client);
    await until(() => side.state === 'closed', 'the client to give up');
  });
});

test('a cursor the server cannot resume resets the client, which goes live', async () => {
  await withServer([], async (server, open) => {
    const { client } = await server.pair();
    const resets = [];
    const side = open(client, { cursor: 999999 });
    side.on('reset', (event) => resets.push(event.error.code));
    await live(side);
    assert.deepEqual(resets, ['out_of_range']);
    assert.ok(side.cursor < 999999);
  });
});

test('a stored cursor resumes: events missed while away arrive once, in order', async () => {
  await withServer([], async (server, open) => {
    const { coach, client, thread } = await server.pair();
    const first = open(client);
    await live(first);
    const cursor = first.cursor;
    first.close();
    const coachSide = open(coach);
    await live(coachSide);
    for (let i = 0; i < 5; i++) await coachSide.send(thread, { text: `while away ${i}` });
    const cursors = [];
    const back = open(client, { cursor, onCursor: (value) => cursors.push(value) });
    const got = [];
    back.on('message', (event) => got.push(event.message.seq));
    await live(back);
    await until(() => got.length === 5, 'the missed messages');
    assert.deepEqual(got, [1, 2, 3, 4, 5]);
    assert.deepEqual([...cursors].sort((a, b) => a - b), cursors, 'cursors only grow');
  });
});

/** A socket the test feeds by hand: `deliver(frame)` plays the server. */
class ScriptedSocket {
  static last;
  constructor(url) {
    this.url = url;
    this.sent = [];
    ScriptedSocket.last = this;
  }
  send(text) { this.sent.push(JSON.parse(text)); }
  close() {}
  deliver(frame) { this.onmessage?.({ data: JSON.stringify(frame) }); }
}

test('events at or below the last cursor are dropped; commands wait for live; replies match by id', async () => {
  const cursors = [];
  const client = new SpotterClient({ url: 'http://127.0.0.1:9', accessToken: 'a', refreshToken: 'r', WebSocket: ScriptedSocket, cursor: 5, onCursor: (c) => cursors.push(c) });
  const messages = [];
  client.on('message', (event) => messages.push(event.cursor));
  client.connect();
  await until(() => ScriptedSocket.last, 'the socket');
  const socket = ScriptedSocket.last;
  assert.match(socket.url, /^ws:\/\/127\.0\.0\.1:9\/v1\/ws\?access_token=a&cursor=5$/);
  const me = client.command('me');
  socket.deliver({ type: 'hello', cursor: 9, user: { id: 'u' }, expires_at: 0 });
  assert.equal(client.state, 'replaying');
  assert.equal(socket.sent.length, 0, 'a command waits for the replay to end');
  for (const cursor of [6, 6, 4, 7]) socket.deliver({ type: 'message', cursor, message: {} });
  socket.deliver({ type: 'live', cursor: 7 });
  assert.equal(client.state, 'live');
  // A resume-style replay may repeat what was delivered live: dropped.
  for (const cursor of [7, 8, 5, 8, 9]) socket.deliver({ type: 'message', cursor, message: {} });
  assert.deepEqual(messages, [6, 7, 8, 9]);
  assert.deepEqual(cursors, [6, 7, 8, 9]);
  assert.equal(socket.sent.length, 1);
  socket.deliver({ type: 'reply', id: 'nope', ok: true, result: {} });
  socket.deliver({ type: 'reply', id: socket.sent[0].id, ok: false, error: { code: 'forbidden', message: 'no' } });
  await assert.rejects(me, { code: 'forbidden' });
  client.close();
});

// MARK: - Connects that fail without a close, or hang (issue 26)

/**
 * Node 20's own WebSocket (`--experimental-websocket`) on a refused connect: `error`, then nothing — no `close`,
 * and readyState stays CONNECTING. This plays it over the shipped adapter: a close before the open is swallowed.
 */
class ErrorWithoutCloseWebSocket extends NodeWebSocket {
  static made = 0;
  constructor(url, protocols) {
    super(url, protocols);
    ErrorWithoutCloseWebSocket.made += 1;
    const report = (event) => {
      if (this.opened) this.userOnClose?.(event);
    };
    const onopen = () => { this.opened = true; this.userOnOpen?.({ type: 'open' }); };
    Object.defineProperty(this, 'onclose', { get: () => report, set: (listener) => { this.userOnClose = listener; } });
    Object.defineProperty(this, 'onopen', { get: () => onopen, set: (listener) => { this.userOnOpen = listener; } });
  }
  get readyState() { return this.opened || this._state !== NodeWebSocket.CLOSED ? this._state : NodeWebSocket.CONNECTING; }
  set readyState(value) { this._state = value; }
}

test('a server that is down: refused connects (error without close, as in Node 20) are retried; once it is up the outbox arrives exactly once', async () => {
  const server = new SpotterProcess();
  await server.start();
  let side, coachSide;
  try {
    const { coach, client, thread } = await server.pair('down');
    await server.stop(); // its port now refuses connections
    ErrorWithoutCloseWebSocket.made = 0;
    side = connect(server, client, { WebSocket: ErrorWithoutCloseWebSocket });
    const total = 30;
    const results = [];
    const sends = Array.from({ length: total }, (_, i) => side.send(thread, { text: `while down ${i}` }).then((message) => { results[i] = message; }));
    await until(() => ErrorWithoutCloseWebSocket.made >= 3, 'three refused connects, each retried');
    assert.notEqual(side.state, 'live');
    assert.equal(side.unacknowledged.length, total);

    await server.start(); // the same port and data
    let timer;
    const timeout = new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`only ${results.filter(Boolean).length}/${total} acked`)), 30000); });
    await Promise.race([Promise.all(sends), timeout]).finally(() => clearTimeout(timer));
    assert.deepEqual(results.map((message) => message.seq).sort((a, b) => a - b), Array.from({ length: total }, (_, i) => i + 1));
    assert.equal(side.unacknowledged.length, 0);
    // Stored once each: the coach's history holds the thirty, no more.
    coachSide = connect(server, coach);
    await live(coachSide);
    const { messages } = await coachSide.command('history', { thread_id: thread, limit: 100 });
    assert.equal(messages.length, total);
    assert.deepEqual(messages.map((message) => message.text).sort(), Array.from({ length: total }, (_, i) => `while down ${i}`).sort());
  } finally {
    side?.close();
    coachSide?.close();
    await server.cleanup();
  }
});

test('a connect that hangs (accepted, the upgrade never answered) is given up after connectTimeoutMs and retried; then it connects', async () => {
  const server = new SpotterProcess();
  await server.start();
  const { client, thread } = await server.pair('hang');
  await server.stop();
  // On the server's port, a listener that takes the TCP connection and never answers the upgrade.
  const accepted = [];
  const silent = net.createServer((socket) => { accepted.push(socket); socket.on('error', () => {}); });
  await new Promise((resolve, reject) => { silent.once('error', reject); silent.listen(server.port, '127.0.0.1', resolve); });
  let side;
  try {
    const timeouts = [];
    side = connect(server, client, { connectTimeoutMs: 300 });
    side.on('connect_timeout', (event) => timeouts.push(event.timeoutMs));
    const sent = side.send(thread, { text: 'after the hang' });
    await until(() => accepted.length >= 2, 'the timed-out connect to be retried');
    assert.ok(timeouts.length >= 1 && timeouts.every((ms) => ms === 300), `connect_timeout events: ${timeouts}`);
    assert.notEqual(side.state, 'live');

    // The silent listener goes; the real server takes its port; the next attempt connects and the send goes through.
    await new Promise((resolve) => { silent.close(resolve); for (const socket of accepted) socket.destroy(); });
    await server.start();
    const message = await sent;
    assert.equal(message.seq, 1);
    await live(side);
  } finally {
    side?.close();
    if (silent.listening) silent.close();
    for (const socket of accepted) socket.destroy();
    await server.cleanup();
  }
});

test("error and close from one failed connect end it once; an error alone ends it too (no close ever comes)", async () => {
  const sockets = [];
  class Silent {
    constructor(url) { this.url = url; this.readyState = 0; sockets.push(this); }
    send() {}
    close() { this.readyState = 3; }
  }
  const disconnects = [];
  // The probe after a failed connect asks GET /v1/me: here it never answers, so nothing else moves.
  const client = new SpotterClient({ url: 'http://127.0.0.1:9', accessToken: 'a', refreshToken: 'r', WebSocket: Silent,
    fetch: () => new Promise(() => {}), connectTimeoutMs: 50 });
  client.on('disconnect', (event) => disconnects.push(event.code));
  client.connect();
  await until(() => sockets.length === 1, 'the first socket');
  // A browser: error, then close, in one task.
  sockets[0].onerror({ type: 'error' });
  sockets[0].onclose?.({ code: 1006, reason: '' });
  await new Promise((resolve) => setTimeout(resolve, 0)); // after the client's own error handling
  assert.deepEqual(disconnects, [1006]);
  assert.equal(client.state, 'waiting');
  client.close();

  // Node 20: error and nothing more.
  const alone = new SpotterClient({ url: 'http://127.0.0.1:9', accessToken: 'a', refreshToken: 'r', WebSocket: Silent,
    fetch: () => new Promise(() => {}), connectTimeoutMs: 50 });
  const ended = [];
  alone.on('disconnect', (event) => ended.push(event.code));
  alone.connect();
  await until(() => sockets.length === 2, 'the second socket');
  sockets[1].onerror({ type: 'error' });
  await until(() => ended.length === 1, 'the error to end the attempt');
  assert.equal(alone.state, 'waiting');
  assert.equal(sockets[1].readyState, 3, 'the failed socket is closed');
  alone.close();
});

test('group challenges: a join and a leave move the count every participant hears of; counts, never names; the coach\'s activity feed', async () => {
  await withServer([], async (server, open) => {
    const { coach, client, thread } = await server.pair('g');
    const second = await server.signUp('client', 'Client h', 'client-h@example.com');
    const linked = await server.call('POST', '/v1/me/coach', { coach_id: coach.id }, second.access);
    assert.equal(linked.status, 201);
    const coachSide = open(coach), first = open(client), other = open(second);
    const heard = { coach: [], first: [], other: [] };
    coachSide.on('challenge_participants', (event) => heard.coach.push(event.participation));
    first.on('challenge_participants', (event) => heard.first.push(event.participation));
    other.on('challenge_participants', (event) => heard.other.push(event.participation));
    await Promise.all([live(coachSide), live(first), live(other)]);

    const today = new Date().toISOString().slice(0, 10);
    const tasks = Array.from({ length: 7 }, (_, day) => ({ name: `Walk, day ${day + 1}`, focus: 'training', intensity: 'light' }));
    await assert.rejects(coachSide.command('challenge.create', { thread_id: thread, name: 'Steps', start_date: today,
      template_id: 'steps', tasks: tasks.slice(0, 5) }), { code: 'challenge_length', field: 'tasks' });
    const made = await coachSide.command('challenge.create', { thread_id: thread, name: 'Steps', start_date: today,
      template_id: 'steps', tasks });
    assert.deepEqual([made.participation.participants, made.participation.finished], [1, 0]);

    const { groups } = await other.command('challenge.groups');
    assert.equal(groups.length, 1);
    assert.equal(groups[0].participation.participants, 1);
    const joined = await other.command('challenge.join', { template_id: 'steps' });
    assert.equal(joined.change, 'challenge.joined');
    assert.equal(joined.participation.participants, 2);
    await until(() => [heard.coach, heard.first, heard.other].every((list) => list.at(-1)?.participants === 2), 'the count of 2');
    assert.ok(!JSON.stringify(heard.other).includes(client.id), "no one else's id");
    await assert.rejects(other.command('challenge.join', { template_id: 'steps' }), { code: 'challenge_already_joined' });

    const left = await other.command('challenge.leave', { challenge_id: joined.challenge.id });
    assert.equal(left.challenge.status, 'left');
    await until(() => heard.coach.at(-1)?.participants === 1 && heard.first.at(-1)?.participants === 1, 'the count back to 1');
    await assert.rejects(other.command('challenge.check', { challenge_id: joined.challenge.id, day: 1, done: true }),
      { code: 'challenge_over' });

    // The coach's activity feed: the second client's join and leave, newest first (the coach's own challenge is not in it).
    const feed = await coachSide.command('activity');
    assert.deepEqual(feed.items.map((item) => item.change), ['challenge.left', 'challenge.joined']);
    assert.ok(feed.items.every((item) => item.client_id === second.id && item.kind === 'challenge'));
    assert.equal(feed.has_more, false);
    await assert.rejects(other.command('activity'), { code: 'forbidden' });
  });
});
