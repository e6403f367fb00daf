// The coach's Daily check-ins panel (issue 30 item 3): each current client's newest daily check-in — the day, the
// overall score, mood / soreness / stress and a sick day — from the `dashboard` cards, kept live by the
// `client_card` event the coach gets after every change of a client's record (a check-in included).

import { byId, h, show } from './dom.js';
import { formatNumber } from './format.js';
import { t } from './i18n.js';
import { state } from './state.js';

const cards = new Map(); // client_id -> the client's dashboard card

/** Forgets the cards (signing out). */
export function forgetCheckIns() {
  cards.clear();
}

/** Reloads every card (after each connect); coaches only. */
export function refreshCheckIns() {
  if (!state.client || state.me?.role !== 'coach') return;
  const current = state.client;
  current.command('dashboard').then((result) => {
    if (state.client !== current) return;
    cards.clear();
    for (const card of result.clients ?? []) cards.set(card.client_id, card);
    renderCheckIns();
  }).catch(() => {});
}

/** A client's fresh card (the `client_card` event). */
export function onClientCard(event) {
  if (!event?.card?.client_id) return;
  cards.set(event.card.client_id, event.card);
  renderCheckIns();
}

export function renderCheckIns() {
  const panel = byId('checkins-panel');
  if (!panel) return;
  const isCoach = state.me?.role === 'coach';
  show(panel, isCoach);
  if (!isCoach) return;
  const items = [...cards.values()]
    .filter((card) => card.daily_check_in)
    .sort((a, b) => (b.daily_check_in.updated_at - a.daily_check_in.updated_at) || a.client_id.localeCompare(b.client_id))
    .map((card) => {
      const checkIn = card.daily_check_in;
      return h('li', { className: `checkin${checkIn.sick ? ' checkin-sick' : ''}`, testid: 'checkin-item',
                       dataset: { clientId: card.client_id, day: checkIn.day, score: checkIn.overall_score } },
        h('p', { className: 'checkin-who' },
          h('span', { className: 'checkin-name', text: card.name ?? '' }),
          ' · ', h('time', { datetime: checkIn.day, text: card.checked_in_today ? t('checkInToday') : checkIn.day })),
        h('p', { className: 'checkin-score' },
          h('span', { className: 'status-pill', testid: 'checkin-score', text: t('checkInScore', { n: formatNumber(checkIn.overall_score) }) }),
          checkIn.sick ? h('span', { className: 'status-pill checkin-sick-pill', text: t('checkInSick') }) : null),
        h('p', { className: 'checkin-answers',
                 text: t('checkInAnswers', { mood: formatNumber(checkIn.mood), soreness: formatNumber(checkIn.soreness),
                                             stress: formatNumber(checkIn.stress) }) }),
        checkIn.notes ? h('p', { className: 'checkin-notes', text: checkIn.notes }) : null);
    });
  byId('checkin-list').replaceChildren(...items);
  show(byId('checkins-empty'), items.length === 0);
}
