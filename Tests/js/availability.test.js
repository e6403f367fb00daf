// The JavaScript client's availability commands against a live Spotter process (issue 30 item 1): the coach saves
// hours with `availability.set`, both sides read free slots with `freeSlots`, and refusals arrive typed.
// Run: node --test Tests/js/ (SPOTTER_BIN names the server binary; the default is .build/debug/spotter).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpotterClient, SpotterError } from '../../Protocol/clients/js/spotter.js';
import { NodeWebSocket } from '../../Protocol/clients/js/node-websocket.js';
import { SpotterProcess, until } from './support/server.js';

const ALL_DAY = Object.fromEntries(['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'].map((d) => [d, [{ start: '00:00', end: '24:00' }]]));

test('availability: the coach saves hours, both sides get the same free slots, an outsider is refused', async () => {
  const server = new SpotterProcess({ args: [] });
  await server.start();
  const clients = [];
  const open = (who) => {
    const client = new SpotterClient({ url: server.url, accessToken: who.access, refreshToken: who.refresh, WebSocket: NodeWebSocket });
    client.connect();
    clients.push(client);
    return client;
  };
  try {
    const { coach, client, thread } = await server.pair('av');
    const other = await server.pair('other');
    const coachSide = open(coach), clientSide = open(client), outsider = open(other.client);
    await until(() => [coachSide, clientSide, outsider].every((c) => c.state === 'live'), 'all live');

    assert.deepEqual(await coachSide.command('availability.get'), { availability: null });
    const midnight = (Math.floor(Date.now() / 86_400_000) + 1) * 86_400;
    const off = new Date((midnight + 86_400) * 1000).toISOString().slice(0, 10);
    const saved = await coachSide.command('availability.set', { time_zone: 'UTC', weekly: ALL_DAY, exceptions: [{ date: off, hours: [] }] });
    assert.equal(saved.availability.time_zone, 'UTC');
    assert.deepEqual(saved.availability.exceptions, [{ date: off, hours: [] }]);

    const asked = { durationMinutes: 60, from: midnight, to: midnight + 2 * 86_400, stepMinutes: 60 };
    const mine = await clientSide.freeSlots(thread, asked);
    assert.equal(mine.availability_set, true);
    assert.equal(mine.slots.length, 24);  // the second day is off
    assert.equal(mine.slots[0].start, midnight);
    assert.match(mine.slots[0].local, /T00:00Z$/);
    const shown = await clientSide.freeSlots(thread, { ...asked, timeZone: 'Asia/Riyadh' });
    assert.match(shown.slots[0].local, /T03:00\+03:00$/);
    assert.deepEqual((await coachSide.freeSlots(thread, asked)).slots, mine.slots);

    await assert.rejects(outsider.freeSlots(thread, asked), (error) => error instanceof SpotterError && error.code === 'forbidden');
    await assert.rejects(clientSide.command('availability.set', { time_zone: 'UTC' }), (error) => error.code === 'forbidden');
    await assert.rejects(clientSide.freeSlots(thread, { ...asked, durationMinutes: 481 }), (error) => error.code === 'out_of_range');
    await assert.rejects(clientSide.command('session.request', { thread_id: thread, start: midnight + 86_400 + 3600, duration_minutes: 30, purpose: 'x' }),
      (error) => error.code === 'outside_availability');
  } finally {
    for (const c of clients) c.close();
    await server.cleanup();
  }
});
