// The admin view: the live figures (figures.js), coach change requests to approve or reject, the users page by
// page, and the coaches with their client counts.

import { announce, byId, h, show } from './dom.js';
import { errorText, formatNumber, formatTime } from './format.js';
import { t } from './i18n.js';
import { renderFigures, startFigures, stopFigures } from './figures.js';
import { state } from './state.js';

let requestsTimer = null;
let changeRequests = [];
let coaches = [];
const USERS_PAGE = 20;
let usersPage = { offset: 0, total: 0, role: '' };

export { renderFigures };

export function startAdmin() {
  startFigures();
  loadAdminLists();
  requestsTimer = setInterval(loadChangeRequests, 15000);
}

export function stopAdmin() {
  stopFigures();
  clearInterval(requestsTimer);
  requestsTimer = null;
  changeRequests = [];
  coaches = [];
  usersPage = { offset: 0, total: 0, role: '' };
  byId('request-list').replaceChildren();
  byId('coach-rows').replaceChildren();
  byId('user-rows').replaceChildren();
}

/** Wires the admin view's buttons: refresh, the role filter and the users' pages. */
export function wireAdmin() {
  byId('requests-refresh').addEventListener('click', () => loadAdminLists());
  byId('users-role').addEventListener('change', (event) => {
    usersPage = { offset: 0, total: 0, role: event.currentTarget.value };
    loadUsers();
  });
  byId('users-previous').addEventListener('click', () => {
    usersPage.offset = Math.max(0, usersPage.offset - USERS_PAGE);
    loadUsers();
  });
  byId('users-next').addEventListener('click', () => {
    usersPage.offset += USERS_PAGE;
    loadUsers();
  });
}

async function loadAdminLists() {
  await loadCoaches();
  await loadChangeRequests();
  await loadUsers();
}

/** One page of GET /v1/admin/users (newest first), with the role filter. */
async function loadUsers() {
  if (!state.client) return;
  const error = byId('users-error');
  const query = new URLSearchParams({ limit: String(USERS_PAGE), offset: String(usersPage.offset) });
  if (usersPage.role) query.set('role', usersPage.role);
  try {
    const page = await state.client.api('GET', `/v1/admin/users?${query}`) ?? { users: [], total: 0 };
    usersPage.total = page.total ?? 0;
    show(error, false);
    renderUsers(page.users ?? []);
  } catch (failure) {
    error.textContent = errorText(failure);
    show(error, true);
  }
}

function renderUsers(users) {
  const rows = users.map((user) => h('tr', { testid: 'user-row', dataset: { id: user.id, role: user.role } },
    h('td', { text: user.full_name ?? String(user.id).slice(0, 8) }),
    h('td', { text: user.email ?? user.phone ?? '' }),
    h('td', { text: t(`role_${user.role}`) })));
  if (rows.length === 0) rows.push(h('tr', {}, h('td', { colspan: 3, text: t('noUsers') })));
  byId('user-rows').replaceChildren(...rows);
  const from = usersPage.total === 0 ? 0 : usersPage.offset + 1;
  byId('users-range').textContent = t('usersRange', {
    from: formatNumber(from), to: formatNumber(usersPage.offset + users.length), total: formatNumber(usersPage.total),
  });
  byId('users-previous').disabled = usersPage.offset === 0;
  byId('users-next').disabled = usersPage.offset + USERS_PAGE >= usersPage.total;
}

async function loadCoaches() {
  if (!state.client) return;
  try {
    // There is no endpoint that lists every user and role; GET /v1/coaches (with client counts) is what exists.
    coaches = await state.client.api('GET', '/v1/coaches') ?? [];
    renderCoaches();
    renderRequests();
  } catch (error) {
    announce(errorText(error));
  }
}

async function loadChangeRequests() {
  if (!state.client) return;
  const error = byId('requests-error');
  try {
    changeRequests = await state.client.api('GET', '/v1/admin/coach-change-requests?status=pending') ?? [];
    show(error, false);
    renderRequests();
  } catch (failure) {
    error.textContent = errorText(failure);
    show(error, true);
  }
}

function coachName(id) {
  const coach = coaches.find((c) => c.id === id);
  return coach?.full_name || t('unknownCoach', { id: String(id).slice(0, 8) });
}

export function renderRequests() {
  const list = byId('request-list');
  const items = changeRequests.filter((r) => r.status === 'pending').map((request) => {
    const decide = (action) => async (event) => {
      const buttons = event.currentTarget.parentElement.querySelectorAll('button');
      for (const button of buttons) button.disabled = true;
      try {
        const result = await state.client.api('POST', `/v1/admin/coach-change-requests/${encodeURIComponent(request.id)}/${action}`);
        announce(t('requestDecided', { status: t(`status_${result?.status ?? (action === 'approve' ? 'approved' : 'rejected')}`) }));
        changeRequests = changeRequests.filter((r) => r.id !== request.id);
        renderRequests();
        loadAdminLists();
      } catch (error) {
        for (const button of buttons) button.disabled = false;
        const node = byId('requests-error');
        node.textContent = errorText(error);
        show(node, true);
      }
    };
    return h('li', { className: 'request', testid: 'change-request', dataset: { id: request.id } },
      h('p', {
        className: 'request-text',
        text: t('requestText', {
          client: request.client_name ?? String(request.client_id).slice(0, 8),
          from: request.from_coach_name ?? coachName(request.from_coach_id),
          to: request.to_coach_name ?? coachName(request.to_coach_id),
        }),
      }),
      request.reason ? h('p', { className: 'request-reason', text: t('requestReason', { reason: request.reason }) }) : null,
      h('p', { className: 'request-when' }, h('time', { text: formatTime(request.created_at, true) })),
      h('div', { className: 'row-buttons' },
        h('button', { type: 'button', className: 'btn btn-primary btn-small', testid: 'change-request-approve', text: t('approve'), onclick: decide('approve') }),
        h('button', { type: 'button', className: 'btn btn-small', testid: 'change-request-reject', text: t('reject'), onclick: decide('reject') })));
  });
  list.replaceChildren(...items);
  show(byId('requests-empty'), items.length === 0);
}

export function renderCoaches() {
  const rows = [...coaches]
    .sort((a, b) => String(a.full_name ?? '').localeCompare(String(b.full_name ?? '')))
    .map((coach) => h('tr', { testid: 'coach-row', dataset: { id: coach.id } },
      h('td', { text: coach.full_name ?? coach.id }),
      h('td', { text: t('role_coach') }),
      h('td', { text: formatNumber(coach.client_count ?? 0) })));
  byId('coach-rows').replaceChildren(...rows);
}
