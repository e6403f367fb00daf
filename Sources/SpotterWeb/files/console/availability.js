// The coach's working hours and booking from free slots (issue 30 item 1): a small weekly-hours editor
// (`availability.get` / `availability.set`) and, for the open conversation, the free times of a session with that
// client (`availability.slots`) to pick one from, which sends `session.invite`. Coaches only; hidden otherwise.

import { byId, h, show } from './dom.js';
import { t } from './i18n.js';
import { state } from './state.js';
import { refreshSessions } from './sessions.js';

const DAYS = ['mon', 'tue', 'wed', 'thu', 'fri', 'sat', 'sun'];
let saved = null; // the coach's availability as last read or saved

function isCoach() {
  return state.me?.role === 'coach';
}

function browserZone() {
  try {
    return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
  } catch {
    return 'UTC';
  }
}

/** Draws the editor's rows from `saved` (or 09:00–17:00 on weekdays when nothing is saved yet). */
export function renderAvailability() {
  const panel = byId('availability-panel');
  const booking = byId('booking-panel');
  show(panel, isCoach());
  show(booking, isCoach());
  if (!isCoach()) return;
  const zone = byId('availability-zone');
  if (!zone.value) zone.value = saved?.time_zone ?? browserZone();
  const rows = DAYS.map((day) => {
    const span = saved ? saved.weekly?.[day]?.[0] : (day === 'sat' || day === 'sun' ? null : { start: '09:00', end: '17:00' });
    return h('div', { className: 'availability-day', testid: `availability-${day}` },
      h('label', {},
        h('input', { type: 'checkbox', className: 'day-on', checked: Boolean(span), 'aria-label': t(`day_${day}`) }),
        ' ', t(`day_${day}`)),
      h('input', { type: 'time', className: 'day-start', value: span?.start ?? '09:00', 'aria-label': t('hoursFrom') }),
      h('input', { type: 'time', className: 'day-end', value: span?.end === '24:00' ? '23:59' : (span?.end ?? '17:00'), 'aria-label': t('hoursTo') }));
  });
  byId('availability-days').replaceChildren(...rows);
}

/** Reads the coach's saved hours (after every connect). */
export function refreshAvailability() {
  if (!isCoach() || !state.client) return;
  const current = state.client;
  current.command('availability.get').then((result) => {
    if (state.client !== current) return;
    saved = result.availability;
    byId('availability-zone').value = saved?.time_zone ?? browserZone();
    renderAvailability();
  }).catch(() => {});
}

/** Forgets the coach's hours (signing out). */
export function forgetAvailability() {
  saved = null;
  byId('availability-zone').value = '';
  byId('booking-slots').replaceChildren();
}

function status(id, text, isError = false) {
  const node = byId(id);
  node.textContent = text;
  node.classList.toggle('error', isError);
}

async function save(event) {
  event.preventDefault();
  const weekly = {};
  for (const day of DAYS) {
    const row = byId('availability-days').querySelector(`[data-testid="availability-${day}"]`);
    if (!row.querySelector('.day-on').checked) continue;
    const end = row.querySelector('.day-end').value;
    // The editor shows a day's first span; any others (set through the API) are kept as they are.
    weekly[day] = [{ start: row.querySelector('.day-start').value, end: end === '23:59' ? '24:00' : end },
      ...(saved?.weekly?.[day] ?? []).slice(1)];
  }
  try {
    const result = await state.client.command('availability.set', {
      time_zone: byId('availability-zone').value.trim(), weekly, exceptions: saved?.exceptions ?? [],
      buffer_before_minutes: saved?.buffer_before_minutes ?? 0, buffer_after_minutes: saved?.buffer_after_minutes ?? 0,
      minimum_notice_minutes: saved?.minimum_notice_minutes ?? 0,
      ...(saved?.max_sessions_per_day ? { max_sessions_per_day: saved.max_sessions_per_day } : {}),
    });
    saved = result.availability;
    status('availability-status', t('hoursSaved'));
  } catch (error) {
    status('availability-status', error.message || t('genericError'), true);
  }
}

/** The free times on the chosen date (the browser's day) for a session with the open conversation's client. */
async function findSlots(event) {
  event.preventDefault();
  const threadId = state.openThreadId;
  const date = byId('booking-date').value;
  if (!threadId) return status('booking-status', t('pickThread'), true);
  if (!date) return status('booking-status', t('pickDate'), true);
  const from = Math.floor(new Date(`${date}T00:00`).getTime() / 1000);
  const minutes = Number(byId('booking-length').value);
  try {
    const result = await state.client.freeSlots(threadId, { durationMinutes: minutes, from, to: from + 86_400, stepMinutes: 15 });
    if (!result.availability_set) status('booking-status', t('noHoursSet'));
    else status('booking-status', result.slots.length ? t('pickSlot') : t('noFreeSlots'));
    const items = result.slots.map((slot) => h('li', {},
      h('button', { type: 'button', className: 'btn btn-small slot', testid: 'booking-slot', dataset: { start: slot.start },
        text: slot.local.slice(11, 16), onclick: () => book(threadId, slot.start, minutes) })));
    byId('booking-slots').replaceChildren(...items);
  } catch (error) {
    status('booking-status', error.message || t('genericError'), true);
  }
}

async function book(threadId, start, minutes) {
  const purpose = byId('booking-purpose').value.trim() || t('defaultPurpose');
  try {
    await state.client.command('session.invite', { thread_id: threadId, start, duration_minutes: minutes, purpose });
    status('booking-status', t('sessionBooked'));
    byId('booking-slots').replaceChildren();
    refreshSessions();
  } catch (error) {
    status('booking-status', error.message || t('genericError'), true);
  }
}

export function wireAvailability() {
  byId('availability-form').addEventListener('submit', save);
  byId('booking-form').addEventListener('submit', findSlots);
}
