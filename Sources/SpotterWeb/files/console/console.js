// Spotter's web console: one page for coaches, clients and admins. Plain ES module, no framework, no build step.
//
// Everything on the live socket goes through SpotterClient (/clients/spotter.js): it reconnects, resumes from the
// last cursor, and resends unacknowledged messages with their client_message_id, so this file only keeps the
// page's state and draws it. Rules this file keeps:
//   - tokens live in sessionStorage only (never localStorage, never the URL); the UI language, which is not a
//     secret, is remembered in localStorage;
//   - data from the server is put on the page with textContent / DOM APIs only, never innerHTML;
//   - the page is served with a strict CSP: no inline scripts or styles, so state is shown with classes,
//     `hidden` and data-* attributes.
// data-testid attributes are what Tests/browser/console_test.py drives; keep them stable.

import { SpotterClient, SpotterError } from '/clients/spotter.js';

// MARK: - Strings

const STRINGS = {
  en: {
    appName: 'Spotter',
    title: 'Spotter console',
    skip: 'Skip to content',
    signInTitle: 'Sign in',
    email: 'Email',
    password: 'Password',
    signIn: 'Sign in',
    signingIn: 'Signing in…',
    orPhone: 'Or sign in with your phone',
    phone: 'Mobile number',
    sendCode: 'Send code',
    code: 'Code',
    verify: 'Verify',
    changeNumber: 'Change number',
    codeSent: 'We sent a 6-digit code to {phone}.',
    devCode: 'Development server: your code is {code}',
    missingCredentials: 'Enter your email and password.',
    missingPhone: 'Enter your mobile number.',
    missingCode: 'Enter the code.',
    networkError: 'Cannot reach the server. Check your connection and try again.',
    genericError: 'Something went wrong. Try again.',
    sessionEnded: 'Your session has ended. Please sign in again.',
    signOut: 'Sign out',
    switchLanguage: 'العربية',
    switchLanguageLabel: 'Switch to Arabic',
    status_connecting: 'Connecting…',
    status_reconnecting: 'Reconnecting…',
    status_replaying: 'Catching up…',
    status_live: 'Live',
    status_waiting: 'Reconnecting…',
    status_closed: 'Offline',
    statusAnnounce: 'Connection: {status}',
    role_coach: 'Coach',
    role_client: 'Client',
    role_admin: 'Admin',
    conversations: 'Conversations',
    noThreads: 'No conversations yet.',
    pickThread: 'Choose a conversation.',
    unknownPeer: 'Unnamed',
    online: 'Online',
    offline: 'Offline',
    lastSeen: 'Last seen {time}',
    typing: 'typing…',
    sending: 'sending…',
    sent: 'Sent',
    delivered: 'Delivered',
    read: 'Read',
    failed: 'Not sent: {error}',
    retry: 'Retry',
    messageLabel: 'Message',
    messagePlaceholder: 'Write a message…',
    send: 'Send',
    back: 'Back',
    inactive: 'This conversation has ended.',
    loadOlder: 'Load older messages',
    unreadCount: '{n} unread',
    newMessageFrom: 'New message from {name}: {text}',
    meal: 'Meal: {name}',
    attachments: '📎 {n} file(s)',
    sessions: 'Sessions',
    noSessions: 'No upcoming sessions.',
    pendingResolutions: '{n} to resolve',
    refresh: 'Refresh',
    minutes: '{n} min',
    meetingLink: 'Meeting link',
    session_requested: 'Requested',
    session_invited: 'Invited: waiting for the client',
    session_alternative_proposed: 'Another time proposed',
    session_scheduled: 'Scheduled',
    session_reschedule_requested: 'Reschedule requested',
    session_needs_resolution: 'Needs a decision',
    session_in_progress: 'In progress',
    session_completed: 'Completed',
    session_cancelled: 'Cancelled',
    session_declined: 'Declined',
    session_expired: 'Expired',
    session_missed: 'Missed',
    adminTitle: 'Administration',
    figures: 'Live server figures',
    connections: 'Open connections',
    msgRate: 'Messages / s',
    p99: 'p99 send ack',
    ms: '{n} ms',
    over: '> {n} ms',
    chartLabel: 'Messages per second and open connections over the last {n} samples',
    changeRequests: 'Coach change requests',
    noChangeRequests: 'No pending requests.',
    approve: 'Approve',
    reject: 'Reject',
    requestText: '{client} asks to move from {from} to {to}',
    requestReason: 'Reason: {reason}',
    requestDecided: 'Request {status}.',
    status_approved: 'approved',
    status_rejected: 'rejected',
    coaches: 'Coaches',
    users: 'Users',
    roleFilter: 'Role',
    role_all: 'All',
    contact: 'Email or phone',
    previous: 'Previous',
    next: 'Next',
    usersRange: '{from}–{to} of {total}',
    noUsers: 'No users.',
    name: 'Name',
    role: 'Role',
    clients: 'Clients',
    unknownCoach: 'coach {id}',
  },
  ar: {
    appName: 'سبوتر',
    title: 'لوحة سبوتر',
    skip: 'انتقل إلى المحتوى',
    signInTitle: 'تسجيل الدخول',
    email: 'البريد الإلكتروني',
    password: 'كلمة المرور',
    signIn: 'دخول',
    signingIn: 'جارٍ تسجيل الدخول…',
    orPhone: 'أو سجّل الدخول برقم جوالك',
    phone: 'رقم الجوال',
    sendCode: 'أرسل الرمز',
    code: 'الرمز',
    verify: 'تحقّق',
    changeNumber: 'تغيير الرقم',
    codeSent: 'أرسلنا رمزًا من ٦ أرقام إلى {phone}.',
    devCode: 'خادم تطوير: رمزك هو {code}',
    missingCredentials: 'أدخل بريدك الإلكتروني وكلمة المرور.',
    missingPhone: 'أدخل رقم جوالك.',
    missingCode: 'أدخل الرمز.',
    networkError: 'تعذّر الوصول إلى الخادم. تحقّق من اتصالك وحاول مرة أخرى.',
    genericError: 'حدث خطأ ما. حاول مرة أخرى.',
    sessionEnded: 'انتهت جلستك. يرجى تسجيل الدخول مرة أخرى.',
    signOut: 'تسجيل الخروج',
    switchLanguage: 'English',
    switchLanguageLabel: 'التبديل إلى الإنجليزية',
    status_connecting: 'جارٍ الاتصال…',
    status_reconnecting: 'جارٍ إعادة الاتصال…',
    status_replaying: 'جارٍ التحديث…',
    status_live: 'متصل',
    status_waiting: 'جارٍ إعادة الاتصال…',
    status_closed: 'غير متصل',
    statusAnnounce: 'الاتصال: {status}',
    role_coach: 'مدرب',
    role_client: 'عميل',
    role_admin: 'مشرف',
    conversations: 'المحادثات',
    noThreads: 'لا توجد محادثات بعد.',
    pickThread: 'اختر محادثة.',
    unknownPeer: 'بدون اسم',
    online: 'متصل الآن',
    offline: 'غير متصل',
    lastSeen: 'آخر ظهور {time}',
    typing: 'يكتب…',
    sending: 'جارٍ الإرسال…',
    sent: 'أُرسلت',
    delivered: 'وصلت',
    read: 'قُرئت',
    failed: 'لم تُرسل: {error}',
    retry: 'أعد المحاولة',
    messageLabel: 'الرسالة',
    messagePlaceholder: 'اكتب رسالة…',
    send: 'إرسال',
    back: 'رجوع',
    inactive: 'انتهت هذه المحادثة.',
    loadOlder: 'تحميل الرسائل الأقدم',
    unreadCount: '{n} غير مقروءة',
    newMessageFrom: 'رسالة جديدة من {name}: {text}',
    meal: 'وجبة: {name}',
    attachments: '📎 {n} ملف',
    sessions: 'الجلسات',
    noSessions: 'لا توجد جلسات قادمة.',
    pendingResolutions: '{n} بحاجة إلى قرار',
    refresh: 'تحديث',
    minutes: '{n} دقيقة',
    meetingLink: 'رابط الاجتماع',
    session_requested: 'مطلوبة',
    session_invited: 'دعوة بانتظار العميل',
    session_alternative_proposed: 'اقتُرح وقت آخر',
    session_scheduled: 'مجدولة',
    session_reschedule_requested: 'طلب إعادة جدولة',
    session_needs_resolution: 'بحاجة إلى قرار',
    session_in_progress: 'جارية',
    session_completed: 'مكتملة',
    session_cancelled: 'ملغاة',
    session_declined: 'مرفوضة',
    session_expired: 'منتهية',
    session_missed: 'فائتة',
    adminTitle: 'الإدارة',
    figures: 'أرقام الخادم المباشرة',
    connections: 'الاتصالات المفتوحة',
    msgRate: 'رسائل / ثانية',
    p99: 'زمن التأكيد p99',
    ms: '{n} م.ث',
    over: '> {n} م.ث',
    chartLabel: 'الرسائل في الثانية والاتصالات المفتوحة خلال آخر {n} قراءة',
    changeRequests: 'طلبات تغيير المدرب',
    noChangeRequests: 'لا توجد طلبات معلّقة.',
    approve: 'موافقة',
    reject: 'رفض',
    requestText: 'يطلب {client} الانتقال من {from} إلى {to}',
    requestReason: 'السبب: {reason}',
    requestDecided: 'تم {status} الطلب.',
    status_approved: 'قبول',
    status_rejected: 'رفض',
    coaches: 'المدربون',
    users: 'المستخدمون',
    roleFilter: 'الدور',
    role_all: 'الكل',
    contact: 'البريد أو الهاتف',
    previous: 'السابق',
    next: 'التالي',
    usersRange: '{from}–{to} من {total}',
    noUsers: 'لا يوجد مستخدمون.',
    name: 'الاسم',
    role: 'الدور',
    clients: 'العملاء',
    unknownCoach: 'المدرب {id}',
  },
};

const SESSION_KEY = 'spotter.console.session'; // sessionStorage: {access_token, refresh_token, user}
const CURSOR_KEY = 'spotter.console.cursor'; // sessionStorage: the last processed event cursor
const LANG_KEY = 'spotter.console.lang'; // localStorage: the UI language only

let lang = initialLanguage();

function initialLanguage() {
  let saved = null;
  try { saved = localStorage.getItem(LANG_KEY); } catch { /* storage may be off */ }
  if (saved === 'en' || saved === 'ar') return saved;
  return (navigator.language || 'en').toLowerCase().startsWith('ar') ? 'ar' : 'en';
}

/** A UI string in the current language, with `{name}` placeholders filled in. */
function t(key, vars = {}) {
  const template = STRINGS[lang][key] ?? STRINGS.en[key] ?? key;
  return template.replace(/\{(\w+)\}/g, (_, name) => (vars[name] === undefined ? '' : String(vars[name])));
}

function locale() {
  return lang === 'ar' ? 'ar' : 'en';
}

// MARK: - DOM helpers

const byId = (id) => document.getElementById(id);

/** Creates an element; text always goes through text nodes (never HTML). */
function h(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === 'className') node.className = value;
    else if (key === 'text') node.textContent = value;
    else if (key === 'testid') node.dataset.testid = value;
    else if (key === 'dataset') for (const [k, v] of Object.entries(value)) node.dataset[k] = String(v);
    else if (key.startsWith('on') && typeof value === 'function') node.addEventListener(key.slice(2), value);
    else if (value === true) node.setAttribute(key, '');
    else node.setAttribute(key, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const SVG_NS = 'http://www.w3.org/2000/svg';

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  return node;
}

function show(node, visible) {
  node.hidden = !visible;
}

let announceTimer = null;
/** Says `text` through the aria-live region. */
function announce(text) {
  const region = byId('announcer');
  clearTimeout(announceTimer);
  region.textContent = '';
  announceTimer = setTimeout(() => { region.textContent = text; }, 50);
}

function formatTime(seconds, withDate = 'auto') {
  if (!seconds) return '';
  const date = new Date(seconds * 1000);
  const today = new Date();
  const sameDay = date.toDateString() === today.toDateString();
  const options = withDate === true || (withDate === 'auto' && !sameDay)
    ? { dateStyle: 'medium', timeStyle: 'short' }
    : { timeStyle: 'short' };
  try {
    return new Intl.DateTimeFormat(locale(), { ...options, timeZone: me?.time_zone || undefined }).format(date);
  } catch {
    return new Intl.DateTimeFormat(locale(), options).format(date);
  }
}

function formatNumber(value, digits = 0) {
  return new Intl.NumberFormat(locale(), { maximumFractionDigits: digits, minimumFractionDigits: digits }).format(value);
}

function errorText(error) {
  if (error instanceof SpotterError) {
    if (error.code === 'connection_lost') return t('networkError');
    if (error.message) return error.message;
  }
  return t('genericError');
}

// MARK: - Session storage

function loadSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
    return session?.access_token && session?.refresh_token && session?.user ? session : null;
  } catch {
    return null;
  }
}

function saveSession(session) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
}

function clearStoredSession() {
  sessionStorage.removeItem(SESSION_KEY);
  sessionStorage.removeItem(CURSOR_KEY);
}

// MARK: - State

let session = null; // {access_token, refresh_token, user}
let me = null; // the signed-in user
let client = null; // SpotterClient
let unsubscribers = [];
let connectionState = 'idle';
let liveCount = 0;

const threads = new Map(); // thread_id -> thread (ThreadView fields + local ones)
const messages = new Map(); // thread_id -> Map(seq -> MessageView)
const pending = new Map(); // client_message_id -> {threadId, text, state: 'sending'|'failed', error, createdAt}
let totalUnread = 0;
let openThreadId = null;
let historyMore = false;
let threadsLoaded = false;
let sessionsCache = { sessions: [], pending_resolutions: 0 };

// The open conversation's nodes.
let nodesBySeq = new Map(); // seq -> <li>
let nodesByCmid = new Map(); // client_message_id -> <li> (not yet acknowledged)
let lastTypingSent = 0;
const typingTimers = new Map(); // thread_id -> timer hiding "typing…"

// MARK: - Language

function applyLanguage() {
  const root = document.documentElement;
  root.lang = lang;
  root.dir = lang === 'ar' ? 'rtl' : 'ltr';
  for (const node of document.querySelectorAll('[data-i18n]')) node.textContent = t(node.dataset.i18n);
  for (const node of document.querySelectorAll('[data-i18n-placeholder]')) node.placeholder = t(node.dataset.i18nPlaceholder);
  const toggle = byId('lang-switch');
  toggle.textContent = t('switchLanguage');
  toggle.lang = lang === 'ar' ? 'en' : 'ar';
  toggle.setAttribute('aria-label', t('switchLanguageLabel'));
  toggle.dataset.lang = lang;
  renderStatus();
  renderWhoami();
  renderTotalUnread();
  if (me && me.role !== 'admin') {
    renderThreadList();
    renderConversation();
    renderSessions();
  }
  if (me?.role === 'admin') {
    renderFigures();
    renderRequests();
    renderCoaches();
  }
}

function setLanguage(next) {
  if (next === lang) return;
  lang = next;
  try { localStorage.setItem(LANG_KEY, lang); } catch { /* private mode */ }
  if (client) client.language = lang;
  applyLanguage();
  // Saved on the account too, so the socket's errors and the session system messages use it.
  if (client) client.api('PUT', '/v1/me/language', { language: lang }).catch(() => {});
}

// MARK: - Header

function renderStatus() {
  const node = byId('status');
  node.dataset.state = connectionState;
  node.dataset.liveCount = String(liveCount);
  show(node, Boolean(client));
  let key = `status_${connectionState}`;
  if (connectionState === 'connecting' && liveCount > 0) key = 'status_reconnecting';
  byId('status-text').textContent = STRINGS.en[key] ? t(key) : '';
}

function renderWhoami() {
  const node = byId('whoami');
  show(node, Boolean(me));
  show(byId('signout'), Boolean(me));
  if (!me) return;
  node.textContent = `${me.full_name || me.email || me.phone || ''} · ${t(`role_${me.role}`)}`;
}

function renderTotalUnread() {
  const badge = document.querySelector('[data-testid="total-unread"]');
  badge.textContent = formatNumber(totalUnread);
  badge.dataset.count = String(totalUnread);
  badge.setAttribute('aria-label', t('unreadCount', { n: totalUnread }));
  show(badge, Boolean(me) && me.role !== 'admin' && totalUnread > 0);
  document.title = totalUnread > 0 ? `(${totalUnread}) ${t('title')}` : t('title');
}

function setTotalUnread(value) {
  if (typeof value !== 'number') return;
  totalUnread = value;
  renderTotalUnread();
}

// MARK: - Views

function showView(name) {
  for (const view of ['signin', 'chat', 'admin']) show(byId(`view-${view}`), view === name);
  document.body.dataset.view = name;
}

function showSignIn(message) {
  showView('signin');
  const error = byId('signin-error');
  error.textContent = message ?? '';
  show(error, Boolean(message));
  byId('signin-email').focus();
}

function signInFailed(error) {
  const node = byId('signin-error');
  node.textContent = typeof error === 'string' ? error : errorText(error);
  show(node, true);
}

async function signInWith(promise, button) {
  const label = button.textContent;
  button.disabled = true;
  button.textContent = t('signingIn');
  show(byId('signin-error'), false);
  try {
    const result = await promise;
    clearStoredSession();
    const next = { access_token: result.access_token, refresh_token: result.refresh_token, user: result.user };
    saveSession(next);
    for (const form of document.querySelectorAll('#view-signin form')) form.reset();
    resetPhoneForm();
    startSession(next);
  } catch (error) {
    signInFailed(error);
  } finally {
    button.disabled = false;
    button.textContent = label;
  }
}

let phoneNumber = null;

function resetPhoneForm() {
  phoneNumber = null;
  show(byId('phone-form'), true);
  show(byId('code-form'), false);
  show(byId('dev-code'), false);
}

function wireSignIn() {
  byId('signin-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const email = byId('signin-email').value.trim();
    const password = byId('signin-password').value;
    if (!email || !password) return signInFailed(t('missingCredentials'));
    signInWith(SpotterClient.signIn(location.origin, email, password, { language: lang }), byId('signin-submit'));
  });
  byId('phone-form').addEventListener('submit', async (event) => {
    event.preventDefault();
    const phone = byId('signin-phone').value.trim();
    if (!phone) return signInFailed(t('missingPhone'));
    const button = byId('phone-submit');
    button.disabled = true;
    show(byId('signin-error'), false);
    try {
      const result = await SpotterClient.requestCode(location.origin, phone, { language: lang });
      phoneNumber = result.phone ?? phone;
      byId('code-sent').textContent = t('codeSent', { phone: phoneNumber });
      const hint = byId('dev-code');
      hint.textContent = result.dev_code ? t('devCode', { code: result.dev_code }) : '';
      hint.dataset.code = result.dev_code ?? '';
      show(hint, Boolean(result.dev_code));
      show(byId('phone-form'), false);
      show(byId('code-form'), true);
      byId('signin-code').focus();
    } catch (error) {
      signInFailed(error);
    } finally {
      button.disabled = false;
    }
  });
  byId('code-form').addEventListener('submit', (event) => {
    event.preventDefault();
    const code = byId('signin-code').value.trim();
    if (!code) return signInFailed(t('missingCode'));
    signInWith(SpotterClient.verifyCode(location.origin, phoneNumber, code, { language: lang }), byId('code-submit'));
  });
  byId('code-cancel').addEventListener('click', () => {
    resetPhoneForm();
    byId('signin-phone').focus();
  });
}

// MARK: - The session

function startSession(stored) {
  session = stored;
  me = stored.user;
  const savedCursor = Number(sessionStorage.getItem(CURSOR_KEY));
  client = new SpotterClient({
    url: location.origin,
    accessToken: stored.access_token,
    refreshToken: stored.refresh_token,
    language: lang,
    cursor: Number.isInteger(savedCursor) && savedCursor > 0 ? savedCursor : undefined,
    onTokens: ({ accessToken, refreshToken }) => {
      session = { ...session, access_token: accessToken, refresh_token: refreshToken };
      saveSession(session);
    },
    onCursor: (cursor) => sessionStorage.setItem(CURSOR_KEY, String(cursor)),
  });
  const on = (type, fn) => unsubscribers.push(client.on(type, fn));
  on('state', onState);
  on('hello', (frame) => {
    if (frame.user?.id === me.id) {
      me = { ...me, ...frame.user };
      session = { ...session, user: me };
      saveSession(session);
      renderWhoami();
    }
  });
  on('revoked', () => endSession(t('sessionEnded')));
  on('signed_out', () => endSession(t('sessionEnded')));
  if (me.role === 'admin') {
    showView('admin');
    startAdmin();
  } else {
    on('message', onMessage);
    on('receipt', onReceipt);
    on('unread', onUnread);
    on('thread', onThread);
    on('presence', onPresence);
    on('typing', onTyping);
    on('session', onSession);
    on('reset', onReset);
    showView('chat');
    renderThreadList();
    renderConversation();
    renderSessions();
  }
  applyLanguage();
  client.connect();
  byId('main').focus();
}

/** Tears the signed-in state down; `message` is shown on the sign-in form. */
function endSession(message) {
  for (const stop of unsubscribers) stop();
  unsubscribers = [];
  const old = client;
  client = null;
  old?.close();
  stopAdmin();
  clearStoredSession();
  session = null;
  me = null;
  threads.clear();
  messages.clear();
  pending.clear();
  for (const timer of typingTimers.values()) clearTimeout(timer);
  typingTimers.clear();
  totalUnread = 0;
  openThreadId = null;
  threadsLoaded = false;
  sessionsCache = { sessions: [], pending_resolutions: 0 };
  nodesBySeq = new Map();
  nodesByCmid = new Map();
  connectionState = 'idle';
  liveCount = 0;
  byId('thread-list').replaceChildren();
  byId('messages').replaceChildren();
  byId('session-list').replaceChildren();
  byId('view-chat').classList.remove('has-open');
  applyLanguage();
  showSignIn(message);
}

async function signOut() {
  const refreshToken = session?.refresh_token;
  endSession();
  if (!refreshToken) return;
  try {
    await fetch('/v1/auth/signout', {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', 'Accept-Language': lang },
      body: JSON.stringify({ refresh_token: refreshToken }),
    });
  } catch {
    // Signed out locally anyway; the refresh token is forgotten.
  }
}

function onState({ state }) {
  const was = connectionState;
  connectionState = state;
  if (state === 'live' && was !== 'live') {
    liveCount += 1;
    if (me && me.role !== 'admin') {
      // Presence is not logged (a replay does not bring it): reload the list, then the sessions.
      refreshThreads();
      refreshSessions();
    }
  }
  renderStatus();
  if (state !== was && (state === 'live' || state === 'waiting' || state === 'closed')) {
    announce(t('statusAnnounce', { status: byId('status-text').textContent }));
  }
}

// MARK: - Threads

function threadMessages(threadId) {
  let map = messages.get(threadId);
  if (!map) {
    map = new Map();
    messages.set(threadId, map);
  }
  return map;
}

const MONOTONIC = ['last_seq', 'read_seq', 'delivered_seq', 'peer_read_seq', 'peer_delivered_seq'];

function mergeThread(view) {
  const existing = threads.get(view.thread_id);
  if (!existing) {
    const thread = { unread: 0, read_seq: 0, peer_read_seq: 0, peer_delivered_seq: 0, last_seq: 0, active: true, ...view };
    threads.set(view.thread_id, thread);
    return thread;
  }
  for (const [key, value] of Object.entries(view)) {
    if (value === undefined) continue;
    if (MONOTONIC.includes(key)) existing[key] = Math.max(existing[key] ?? 0, value ?? 0);
    else existing[key] = value;
  }
  return existing;
}

let threadsInFlight = null;
let threadsAgain = false;

/** Reloads the conversation list (after every connect: presence and counts are current there). */
function refreshThreads() {
  if (!client) return Promise.resolve();
  if (threadsInFlight) {
    threadsAgain = true;
    return threadsInFlight;
  }
  const current = client;
  threadsInFlight = current.command('threads').then((result) => {
    if (client !== current) return;
    const seen = new Set();
    for (const view of result.threads) {
      seen.add(view.thread_id);
      const thread = mergeThread(view);
      thread.unread = view.unread;
    }
    for (const id of [...threads.keys()]) if (!seen.has(id)) threads.delete(id);
    threadsLoaded = true;
    setTotalUnread(result.total_unread);
    if (openThreadId && !threads.has(openThreadId)) openThreadId = null;
    if (!openThreadId && me.role === 'client') {
      // A client usually has one coach: open their conversation at once.
      const first = [...threads.values()].find((thread) => thread.active) ?? threads.values().next().value;
      if (first) return openThread(first.thread_id, { focus: false });
    }
    renderThreadList();
    if (openThreadId) {
      renderConversationHead();
      updateTicks();
      markRead();
    }
  }).catch((error) => {
    if (!(error instanceof SpotterError) || !['closed', 'revoked', 'signed_out', 'connection_lost'].includes(error.code)) {
      console.warn('threads', error);
    }
  }).finally(() => {
    threadsInFlight = null;
    if (threadsAgain) {
      threadsAgain = false;
      refreshThreads();
    }
  });
  return threadsInFlight;
}

function sortedThreads() {
  return [...threads.values()].sort((a, b) =>
    (b.active === a.active ? 0 : b.active ? 1 : -1) ||
    (b.last_message_at ?? 0) - (a.last_message_at ?? 0) ||
    String(a.peer_name ?? '').localeCompare(String(b.peer_name ?? '')));
}

function presenceText(thread) {
  if (thread.peer_online) return t('online');
  if (thread.peer_last_seen_at) return t('lastSeen', { time: formatTime(thread.peer_last_seen_at) });
  return t('offline');
}

function peerName(thread) {
  return thread?.peer_name || t('unknownPeer');
}

function isTyping(thread) {
  return Boolean(thread.typingUntil && thread.typingUntil > Date.now());
}

function threadItem(thread) {
  const initials = peerName(thread).split(/\s+/).filter(Boolean).slice(0, 2).map((part) => [...part][0]).join('').toUpperCase();
  const unread = thread.unread ?? 0;
  const open = thread.thread_id === openThreadId;
  const preview = isTyping(thread) ? t('typing') : previewText(thread);
  const button = h('button', {
    type: 'button',
    className: `thread${open ? ' is-open' : ''}${thread.active ? '' : ' is-inactive'}${unread > 0 ? ' has-unread' : ''}`,
    testid: 'thread-item',
    dataset: { threadId: thread.thread_id, peerId: thread.peer_id, unread },
    'aria-current': open ? 'true' : undefined,
    onclick: () => openThread(thread.thread_id, { focus: true }),
  },
  h('span', { className: 'avatar', 'aria-hidden': 'true' },
    initials || '?',
    h('span', { className: `presence-dot${thread.peer_online ? ' is-online' : ''}`, testid: 'presence', dataset: { online: Boolean(thread.peer_online) } })),
  h('span', { className: 'thread-main' },
    h('span', { className: 'thread-row' },
      h('span', { className: 'thread-name', testid: 'thread-name', text: peerName(thread) }),
      h('time', { className: 'thread-time', text: formatTime(thread.last_message_at) })),
    h('span', { className: 'thread-row' },
      h('span', { className: `thread-preview${isTyping(thread) ? ' is-typing' : ''}`, testid: 'thread-preview', text: preview }),
      h('span', {
        className: 'badge', testid: 'thread-unread', hidden: unread === 0,
        'aria-label': t('unreadCount', { n: unread }), dataset: { count: unread },
      }, formatNumber(unread))),
    h('span', { className: 'visually-hidden', text: presenceText(thread) })));
  return h('li', {}, button);
}

function previewText(thread) {
  return thread.last_preview ?? '';
}

function renderThreadList() {
  const list = byId('thread-list');
  const focusedId = document.activeElement?.closest?.('[data-testid="thread-item"]')?.dataset.threadId;
  const items = sortedThreads().map(threadItem);
  list.replaceChildren(...items);
  show(byId('threads-empty'), threadsLoaded && items.length === 0);
  if (focusedId) list.querySelector(`[data-thread-id="${CSS.escape(focusedId)}"]`)?.focus();
}

let threadListFrame = 0;
function scheduleThreadList() {
  if (threadListFrame) return;
  threadListFrame = requestAnimationFrame(() => {
    threadListFrame = 0;
    renderThreadList();
  });
}

// MARK: - The open conversation

async function openThread(threadId, { focus } = {}) {
  if (!threads.has(threadId)) return;
  const changed = openThreadId !== threadId;
  openThreadId = threadId;
  byId('view-chat').classList.add('has-open');
  if (changed) {
    historyMore = false;
    renderConversation();
    byId('messages-scroll').scrollTop = byId('messages-scroll').scrollHeight;
  }
  renderThreadList();
  if (focus) byId('composer-input').focus();
  markRead();
  if (changed) await loadHistory(threadId);
}

function closeThread() {
  openThreadId = null;
  byId('view-chat').classList.remove('has-open');
  renderConversation();
  renderThreadList();
}

async function loadHistory(threadId, beforeSeq) {
  if (!client) return;
  const scroller = byId('messages-scroll');
  const fromBottom = scroller.scrollHeight - scroller.scrollTop;
  try {
    const fields = { thread_id: threadId, limit: 50 };
    if (beforeSeq) fields.before_seq = beforeSeq;
    const result = await client.command('history', fields);
    const map = threadMessages(threadId);
    for (const message of result.messages) {
      map.set(message.seq, { ...map.get(message.seq), ...message });
      forgetPending(message);
    }
    const thread = threads.get(threadId);
    if (thread && result.messages.length) thread.last_seq = Math.max(thread.last_seq ?? 0, result.messages[0].seq);
    if (openThreadId !== threadId) return;
    historyMore = result.has_more;
    renderConversation();
    // Keep the reader where they were when older messages come in; else go to the newest.
    scroller.scrollTop = beforeSeq ? scroller.scrollHeight - fromBottom : scroller.scrollHeight;
    markRead();
  } catch (error) {
    if (error instanceof SpotterError && ['closed', 'revoked', 'signed_out'].includes(error.code)) return;
    announce(errorText(error));
  }
}

/** An acknowledged message replaces its optimistic copy. */
function forgetPending(message) {
  if (!message.client_message_id || message.sender_id !== me?.id) return;
  pending.delete(message.client_message_id);
}

function messageText(message) {
  if (message.kind === 'meal_log' && message.meal) {
    const calories = message.meal.calories !== undefined ? ` · ${formatNumber(message.meal.calories)} kcal` : '';
    return `🍽 ${t('meal', { name: message.meal.name ?? '' })}${calories}`;
  }
  const files = message.attachments?.length ? ` ${t('attachments', { n: message.attachments.length })}` : '';
  return `${message.text ?? ''}${files}`.trim();
}

/** 'sent' (✓, stored), 'read' (✓✓, the peer's read position passed it), or 'received' / 'system'. */
function messageState(threadId, message) {
  if (message.kind === 'system' || !message.sender_id) return 'system';
  if (message.sender_id !== me?.id) return 'received';
  const thread = threads.get(threadId);
  return thread && (thread.peer_read_seq ?? 0) >= message.seq ? 'read' : 'sent';
}

function applyTick(node, state) {
  node.dataset.state = state;
  const tick = node.querySelector('.tick');
  if (!tick) return;
  if (state === 'sending') {
    tick.textContent = t('sending');
    tick.removeAttribute('aria-label');
  } else if (state === 'read') {
    tick.textContent = '✓✓';
    tick.setAttribute('aria-label', t('read'));
  } else if (state === 'sent') {
    tick.textContent = '✓';
    tick.setAttribute('aria-label', t('sent'));
  }
  tick.title = tick.getAttribute('aria-label') ?? '';
}

function messageNode(threadId, message) {
  const state = messageState(threadId, message);
  const own = state === 'sent' || state === 'read';
  const node = h('li', {
    className: `message message-${message.kind}${own ? ' is-own' : ''}${state === 'system' ? ' is-system' : ''}`,
    testid: 'message',
    dataset: { seq: message.seq, kind: message.kind, sender: own ? 'me' : state === 'system' ? 'system' : 'peer' },
  },
  h('p', { className: 'message-text', testid: 'message-text', text: messageText(message) }),
  h('p', { className: 'message-meta' },
    h('time', { datetime: new Date(message.created_at * 1000).toISOString(), text: formatTime(message.created_at) }),
    own ? h('span', { className: 'tick', testid: 'message-tick' }) : null));
  applyTick(node, state);
  return node;
}

function pendingNode(clientMessageId, entry) {
  const failed = entry.state === 'failed';
  const node = h('li', {
    className: `message message-text is-own is-pending${failed ? ' is-failed' : ''}`,
    testid: 'message',
    dataset: { cmid: clientMessageId, sender: 'me' },
  },
  h('p', { className: 'message-text', testid: 'message-text', text: entry.text }),
  h('p', { className: 'message-meta' },
    failed ? h('span', { className: 'failed-text', role: 'alert', text: t('failed', { error: entry.error }) }) : null,
    failed ? h('button', { type: 'button', className: 'btn btn-small', text: t('retry'), onclick: () => transmit(clientMessageId) }) : null,
    failed ? null : h('span', { className: 'tick', testid: 'message-tick' })));
  if (failed) node.dataset.state = 'failed';
  else applyTick(node, 'sending');
  return node;
}

/** Draws the whole open conversation from the state (after opening it, history, a language switch). */
function renderConversation() {
  const thread = openThreadId ? threads.get(openThreadId) : null;
  show(byId('conversation-empty'), !thread);
  show(byId('conversation-body'), Boolean(thread));
  const list = byId('messages');
  nodesBySeq = new Map();
  nodesByCmid = new Map();
  if (!thread) {
    list.replaceChildren();
    return;
  }
  renderConversationHead();
  const nodes = [];
  const sorted = [...threadMessages(thread.thread_id).values()].sort((a, b) => a.seq - b.seq);
  for (const message of sorted) {
    const node = messageNode(thread.thread_id, message);
    nodesBySeq.set(message.seq, node);
    nodes.push(node);
  }
  for (const [clientMessageId, entry] of pending) {
    if (entry.threadId !== thread.thread_id) continue;
    const node = pendingNode(clientMessageId, entry);
    nodesByCmid.set(clientMessageId, node);
    nodes.push(node);
  }
  list.replaceChildren(...nodes);
  show(byId('load-older'), historyMore);
}

function renderConversationHead() {
  const thread = openThreadId ? threads.get(openThreadId) : null;
  if (!thread) return;
  byId('peer-name').textContent = peerName(thread);
  const presence = byId('peer-presence');
  presence.textContent = presenceText(thread);
  presence.dataset.online = String(Boolean(thread.peer_online));
  presence.classList.toggle('is-online', Boolean(thread.peer_online));
  const typing = byId('typing');
  typing.textContent = t('typing');
  show(typing, isTyping(thread));
  const inactive = thread.active === false;
  show(byId('inactive-note'), inactive);
  byId('composer-input').disabled = inactive;
  byId('composer-send').disabled = inactive;
}

function nearBottom() {
  const scroller = byId('messages-scroll');
  return scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight < 80;
}

function scrollToBottom() {
  const scroller = byId('messages-scroll');
  scroller.scrollTop = scroller.scrollHeight;
}

/** Puts `node` in seq order: before the first later message, and before the optimistic ones at the end. */
function insertInOrder(node, seq) {
  const list = byId('messages');
  for (const child of list.children) {
    const childSeq = child.dataset.seq ? Number(child.dataset.seq) : Infinity;
    if (childSeq > seq) {
      list.insertBefore(node, child);
      return;
    }
  }
  list.append(node);
}

/** Adds or updates one stored message of the open conversation, exactly once per seq. */
function drawMessage(threadId, message) {
  if (threadId !== openThreadId) return;
  const stick = nearBottom();
  const node = messageNode(threadId, message);
  const old = nodesBySeq.get(message.seq);
  const optimistic = message.sender_id === me?.id && message.client_message_id ? nodesByCmid.get(message.client_message_id) : null;
  old?.remove();
  if (optimistic) {
    optimistic.remove();
    nodesByCmid.delete(message.client_message_id);
  }
  nodesBySeq.set(message.seq, node);
  insertInOrder(node, message.seq);
  if (stick || message.sender_id === me?.id) scrollToBottom();
}

function storeMessage(threadId, message) {
  const map = threadMessages(threadId);
  map.set(message.seq, { ...map.get(message.seq), ...message });
  forgetPending(message);
  drawMessage(threadId, map.get(message.seq));
}

function updateTicks() {
  if (!openThreadId) return;
  for (const [seq, node] of nodesBySeq) {
    const message = threadMessages(openThreadId).get(seq);
    if (message) {
      const state = messageState(openThreadId, message);
      if (node.dataset.state !== state) applyTick(node, state);
    }
  }
}

function latestSeq(threadId) {
  const thread = threads.get(threadId);
  let top = thread?.last_seq ?? 0;
  for (const seq of threadMessages(threadId).keys()) top = Math.max(top, seq);
  return top;
}

/** Reports the open, visible conversation read up to its newest message (the peer's ✓✓). */
function markRead() {
  const threadId = openThreadId;
  if (!threadId || !client || document.visibilityState !== 'visible') return;
  const thread = threads.get(threadId);
  if (!thread) return;
  const top = latestSeq(threadId);
  if (top === 0 || (top <= (thread.read_seq ?? 0) && !thread.unread)) return;
  if ((thread.readingSeq ?? 0) >= top) return;
  thread.readingSeq = top;
  client.command('thread.read', { thread_id: threadId, seq: top }).then((result) => {
    thread.read_seq = Math.max(thread.read_seq ?? 0, result.read_seq);
    thread.unread = result.unread;
    setTotalUnread(result.total_unread);
    scheduleThreadList();
  }).catch(() => {}).finally(() => {
    if (thread.readingSeq === top) thread.readingSeq = 0;
  });
}

// MARK: - Sending

function newClientMessageId() {
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  return `web-${[...bytes].map((b) => b.toString(16).padStart(2, '0')).join('')}`;
}

function sendText(threadId, text) {
  const clientMessageId = newClientMessageId();
  pending.set(clientMessageId, { threadId, text, state: 'sending' });
  if (threadId === openThreadId) {
    const node = pendingNode(clientMessageId, pending.get(clientMessageId));
    nodesByCmid.set(clientMessageId, node);
    byId('messages').append(node);
    scrollToBottom();
  }
  transmit(clientMessageId);
}

function transmit(clientMessageId) {
  const entry = pending.get(clientMessageId);
  if (!entry || !client) return;
  const current = client;
  if (entry.state === 'failed') {
    entry.state = 'sending';
    redrawPending(clientMessageId);
  }
  current.send(entry.threadId, { text: entry.text }, { clientMessageId }).then((message) => {
    if (client !== current) return;
    const thread = threads.get(entry.threadId);
    if (thread) {
      thread.last_seq = Math.max(thread.last_seq ?? 0, message.seq);
      thread.last_preview = message.text ?? thread.last_preview;
      thread.last_message_at = message.created_at;
      scheduleThreadList();
    }
    storeMessage(entry.threadId, message);
  }, (error) => {
    if (client !== current || !pending.has(clientMessageId)) return;
    entry.state = 'failed';
    entry.error = errorText(error);
    redrawPending(clientMessageId);
  });
}

function redrawPending(clientMessageId) {
  const entry = pending.get(clientMessageId);
  const old = nodesByCmid.get(clientMessageId);
  if (!entry || entry.threadId !== openThreadId) return;
  const node = pendingNode(clientMessageId, entry);
  nodesByCmid.set(clientMessageId, node);
  if (old) old.replaceWith(node);
  else byId('messages').append(node);
}

function wireComposer() {
  const form = byId('composer');
  const input = byId('composer-input');
  form.addEventListener('submit', (event) => {
    event.preventDefault();
    const text = input.value.trim();
    if (!text || !openThreadId) return;
    const thread = threads.get(openThreadId);
    if (thread?.active === false) return;
    input.value = '';
    sendText(openThreadId, text);
    input.focus();
  });
  input.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey && !event.isComposing) {
      event.preventDefault();
      form.requestSubmit();
    } else if (event.key === 'Escape' && window.matchMedia('(max-width: 640px)').matches) {
      closeThread();
    }
  });
  input.addEventListener('input', () => {
    if (!client || !openThreadId || !input.value.trim()) return;
    const now = Date.now();
    if (now - lastTypingSent < 2000) return;
    lastTypingSent = now;
    client.command('typing', { thread_id: openThreadId }).catch(() => {});
  });
  byId('back-button').addEventListener('click', () => {
    const id = openThreadId;
    closeThread();
    if (id) byId('thread-list').querySelector(`[data-thread-id="${CSS.escape(id)}"]`)?.focus();
  });
  byId('load-older').addEventListener('click', () => {
    if (!openThreadId) return;
    const seqs = [...threadMessages(openThreadId).keys()];
    const oldest = seqs.length ? Math.min(...seqs) : undefined;
    if (oldest && oldest > 1) loadHistory(openThreadId, oldest);
  });
  document.addEventListener('visibilitychange', () => markRead());
  window.addEventListener('focus', () => markRead());
}

// MARK: - Events

function onMessage(event) {
  const message = event.message;
  const threadId = message.thread_id;
  let thread = threads.get(threadId);
  if (!thread) {
    threadMessages(threadId).set(message.seq, message);
    refreshThreads();
    return;
  }
  thread.last_seq = Math.max(thread.last_seq ?? 0, message.seq);
  if (message.kind !== 'system') {
    // The list's preview stays the last message a person wrote.
    thread.last_preview = messageText(message);
    thread.last_message_at = message.created_at;
    thread.last_sender_id = message.sender_id;
  }
  thread.unread = event.unread;
  setTotalUnread(event.total_unread);
  const fromPeer = message.sender_id && message.sender_id !== me.id;
  if (message.sender_id === me.id) {
    // Sending marks the thread read up to the message.
    thread.read_seq = Math.max(thread.read_seq ?? 0, message.seq);
  }
  if (fromPeer) {
    // A message from the peer means they have read the thread up to it.
    thread.peer_read_seq = Math.max(thread.peer_read_seq ?? 0, message.seq);
    thread.peer_delivered_seq = Math.max(thread.peer_delivered_seq ?? 0, message.seq);
    thread.typingUntil = 0;
  }
  storeMessage(threadId, message);
  if (threadId === openThreadId) {
    renderConversationHead();
    updateTicks();
  }
  if (fromPeer) {
    const visible = threadId === openThreadId && document.visibilityState === 'visible';
    if (visible) markRead();
    else {
      client.command('receipt.delivered', { thread_id: threadId, seq: message.seq }).catch(() => {});
      announce(t('newMessageFrom', { name: peerName(thread), text: messageText(message) }));
    }
  }
  scheduleThreadList();
}

function onSession(event) {
  if (event.message) {
    const thread = threads.get(event.message.thread_id);
    if (thread) {
      thread.last_seq = Math.max(thread.last_seq ?? 0, event.message.seq);
      thread.unread = event.unread;
      storeMessage(thread.thread_id, event.message);
      if (thread.thread_id === openThreadId) markRead();
      scheduleThreadList();
    }
    setTotalUnread(event.total_unread);
  }
  refreshSessions();
}

function onReceipt(event) {
  if (event.user_id === me.id) return;
  const thread = threads.get(event.thread_id);
  if (!thread) return;
  thread.peer_read_seq = Math.max(thread.peer_read_seq ?? 0, event.read_seq ?? 0);
  thread.peer_delivered_seq = Math.max(thread.peer_delivered_seq ?? 0, event.delivered_seq ?? 0);
  if (event.thread_id === openThreadId) updateTicks();
}

function onUnread(event) {
  const thread = threads.get(event.thread_id);
  if (thread) {
    thread.unread = event.unread;
    thread.read_seq = Math.max(thread.read_seq ?? 0, event.read_seq ?? 0);
  }
  setTotalUnread(event.total_unread);
  scheduleThreadList();
}

function onThread(event) {
  mergeThread({ thread_id: event.thread_id, peer_id: event.peer_id, peer_name: event.peer_name ?? undefined, active: event.active });
  scheduleThreadList();
  if (event.thread_id === openThreadId) renderConversationHead();
  refreshThreads();
}

function onPresence(event) {
  for (const thread of threads.values()) {
    if (thread.peer_id !== event.user_id) continue;
    thread.peer_online = event.online;
    if (event.last_seen_at) thread.peer_last_seen_at = event.last_seen_at;
  }
  scheduleThreadList();
  renderConversationHead();
}

function onTyping(event) {
  if (event.user_id === me.id) return;
  const thread = threads.get(event.thread_id);
  if (!thread) return;
  const seconds = Number(event.expires_in) || 5;
  thread.typingUntil = Date.now() + seconds * 1000;
  clearTimeout(typingTimers.get(thread.thread_id));
  typingTimers.set(thread.thread_id, setTimeout(() => {
    typingTimers.delete(thread.thread_id);
    if (threads.get(thread.thread_id) !== thread) return;
    thread.typingUntil = 0;
    scheduleThreadList();
    renderConversationHead();
  }, seconds * 1000 + 50));
  scheduleThreadList();
  renderConversationHead();
}

function onReset() {
  // The server could not resume our cursor: reload the list and the open conversation.
  const open = openThreadId;
  messages.clear();
  refreshThreads();
  if (open) {
    renderConversation();
    loadHistory(open);
  }
}

// MARK: - Sessions (video calls)

const UPCOMING = new Set(['requested', 'invited', 'alternative_proposed', 'scheduled', 'reschedule_requested', 'needs_resolution', 'in_progress']);

function refreshSessions() {
  if (!client || !me || me.role === 'admin') return;
  const current = client;
  current.command('sessions').then((result) => {
    if (client !== current) return;
    sessionsCache = result;
    renderSessions();
  }).catch(() => {});
}

function renderSessions() {
  const list = byId('session-list');
  const now = Date.now() / 1000;
  const upcoming = (sessionsCache.sessions ?? [])
    .filter((s) => UPCOMING.has(s.status) && s.start + s.duration_minutes * 60 > now)
    .sort((a, b) => a.start - b.start);
  const items = upcoming.map((s) => {
    const thread = threads.get(s.thread_id);
    const link = safeUrl(s.meet_url);
    return h('li', { className: `session status-${s.status}`, testid: 'session-item', dataset: { status: s.status, sessionId: s.id } },
      h('p', { className: 'session-when' },
        h('time', { datetime: new Date(s.start * 1000).toISOString(), text: formatTime(s.start, true) }),
        ' · ', t('minutes', { n: formatNumber(s.duration_minutes) })),
      h('p', { className: 'session-who', text: thread ? peerName(thread) : '' }),
      h('p', { className: 'session-purpose', text: s.purpose }),
      h('p', { className: 'session-status' },
        h('span', { className: 'status-pill', text: t(`session_${s.status}`) }),
        link && (s.status === 'scheduled' || s.status === 'in_progress')
          ? h('a', { href: link, target: '_blank', rel: 'noopener noreferrer', className: 'meet-link', text: t('meetingLink') })
          : null));
  });
  list.replaceChildren(...items);
  show(byId('sessions-empty'), items.length === 0);
  const badge = byId('sessions-pending');
  const count = sessionsCache.pending_resolutions ?? 0;
  badge.textContent = t('pendingResolutions', { n: formatNumber(count) });
  badge.dataset.count = String(count);
  show(badge, count > 0);
}

function safeUrl(value) {
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? url.href : null;
  } catch {
    return null;
  }
}

// MARK: - Admin

const METRICS_EVERY_MS = 2000;
const CHART_POINTS = 60;
let metricsTimer = null;
let requestsTimer = null;
let samples = []; // {at, connections, rate}
let lastScrape = null; // {at, messages, buckets}
let figures = { connections: null, rate: null, p99: null, p99Over: false };
let changeRequests = [];
let coaches = [];
const USERS_PAGE = 20;
let usersPage = { offset: 0, total: 0, role: '' };
let chartParts = null;

function startAdmin() {
  samples = [];
  lastScrape = null;
  figures = { connections: null, rate: null, p99: null, p99Over: false };
  buildChart();
  pollMetrics();
  metricsTimer = setInterval(pollMetrics, METRICS_EVERY_MS);
  loadAdminLists();
  requestsTimer = setInterval(loadChangeRequests, 15000);
}

function stopAdmin() {
  clearInterval(metricsTimer);
  clearInterval(requestsTimer);
  metricsTimer = requestsTimer = null;
  changeRequests = [];
  coaches = [];
  usersPage = { offset: 0, total: 0, role: '' };
  byId('request-list').replaceChildren();
  byId('coach-rows').replaceChildren();
  byId('user-rows').replaceChildren();
}

async function loadAdminLists() {
  await loadCoaches();
  await loadChangeRequests();
  await loadUsers();
}

/** One page of GET /v1/admin/users (newest first), with the role filter. */
async function loadUsers() {
  if (!client) return;
  const error = byId('users-error');
  const query = new URLSearchParams({ limit: String(USERS_PAGE), offset: String(usersPage.offset) });
  if (usersPage.role) query.set('role', usersPage.role);
  try {
    const page = await client.api('GET', `/v1/admin/users?${query}`) ?? { users: [], total: 0 };
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
  if (!client) return;
  try {
    // There is no endpoint that lists every user and role; GET /v1/coaches (with client counts) is what exists.
    coaches = await client.api('GET', '/v1/coaches') ?? [];
    renderCoaches();
    renderRequests();
  } catch (error) {
    announce(errorText(error));
  }
}

async function loadChangeRequests() {
  if (!client) return;
  const error = byId('requests-error');
  try {
    changeRequests = await client.api('GET', '/v1/admin/coach-change-requests?status=pending') ?? [];
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

function renderRequests() {
  const list = byId('request-list');
  const items = changeRequests.filter((r) => r.status === 'pending').map((request) => {
    const decide = (action) => async (event) => {
      const buttons = event.currentTarget.parentElement.querySelectorAll('button');
      for (const button of buttons) button.disabled = true;
      try {
        const result = await client.api('POST', `/v1/admin/coach-change-requests/${encodeURIComponent(request.id)}/${action}`);
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

function renderCoaches() {
  const rows = [...coaches]
    .sort((a, b) => String(a.full_name ?? '').localeCompare(String(b.full_name ?? '')))
    .map((coach) => h('tr', { testid: 'coach-row', dataset: { id: coach.id } },
      h('td', { text: coach.full_name ?? coach.id }),
      h('td', { text: t('role_coach') }),
      h('td', { text: formatNumber(coach.client_count ?? 0) })));
  byId('coach-rows').replaceChildren(...rows);
}

/** Prometheus text → Map(name → [{labels, value}]). */
function parseMetrics(text) {
  const metrics = new Map();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{([^}]*)\})?\s+(\S+)/.exec(line);
    if (!match) continue;
    const labels = {};
    for (const label of (match[2] ?? '').matchAll(/([a-zA-Z_]\w*)="((?:[^"\\]|\\.)*)"/g)) labels[label[1]] = label[2];
    const value = match[3] === '+Inf' ? Infinity : Number(match[3]);
    if (!metrics.has(match[1])) metrics.set(match[1], []);
    metrics.get(match[1]).push({ labels, value });
  }
  return metrics;
}

function single(metrics, name) {
  const samplesOf = metrics.get(name);
  if (!samplesOf?.length) return null;
  return samplesOf.reduce((sum, s) => sum + (Number.isFinite(s.value) ? s.value : 0), 0);
}

/** Cumulative histogram buckets as [{le, count}], sorted by le (absent: null). */
function histogram(metrics, name) {
  const rows = metrics.get(`${name}_bucket`);
  if (!rows?.length) return null;
  return rows
    .map((row) => ({ le: row.labels.le === '+Inf' ? Infinity : Number(row.labels.le), count: row.value }))
    .filter((row) => !Number.isNaN(row.le))
    .sort((a, b) => a.le - b.le);
}

/** The q-quantile (seconds) estimated from cumulative buckets, interpolating inside the bucket; {value, over}. */
function quantile(buckets, q) {
  const total = buckets[buckets.length - 1]?.count ?? 0;
  if (!(total > 0)) return null;
  const rank = q * total;
  for (let i = 0; i < buckets.length; i += 1) {
    if (buckets[i].count >= rank) {
      const lower = i > 0 ? buckets[i - 1].le : 0;
      const upper = buckets[i].le;
      if (!Number.isFinite(upper)) return { value: lower, over: true };
      const below = i > 0 ? buckets[i - 1].count : 0;
      const inBucket = buckets[i].count - below;
      const fraction = inBucket > 0 ? (rank - below) / inBucket : 1;
      return { value: lower + (upper - lower) * fraction, over: false };
    }
  }
  return null;
}

async function pollMetrics() {
  let text;
  try {
    const response = await fetch('/metrics', { cache: 'no-store' });
    if (!response.ok) throw new Error(String(response.status));
    text = await response.text();
  } catch {
    figures = { connections: null, rate: null, p99: null, p99Over: false };
    renderFigures();
    return;
  }
  if (!metricsTimer) return;
  const at = performance.now();
  const metrics = parseMetrics(text);
  const connections = single(metrics, 'spotter_connections_open');
  const sent = single(metrics, 'spotter_messages_total');
  const buckets = histogram(metrics, 'spotter_send_ack_seconds');

  let rate = null;
  if (sent !== null && lastScrape?.messages !== null && lastScrape?.messages !== undefined) {
    const seconds = (at - lastScrape.at) / 1000;
    const delta = sent - lastScrape.messages;
    if (seconds > 0 && delta >= 0) rate = delta / seconds; // a negative delta: the server restarted
  }
  // p99 over the last interval when something was sent in it, else over everything since the server started.
  let p99 = null;
  if (buckets) {
    let window = buckets;
    if (lastScrape?.buckets && lastScrape.buckets.length === buckets.length) {
      const delta = buckets.map((b, i) => ({ le: b.le, count: b.count - lastScrape.buckets[i].count }));
      if (delta[delta.length - 1].count > 0 && delta.every((b) => b.count >= 0)) window = delta;
    }
    p99 = quantile(window, 0.99);
  }
  lastScrape = { at, messages: sent, buckets };
  figures = { connections, rate, p99: p99 ? p99.value * 1000 : null, p99Over: Boolean(p99?.over) };
  samples.push({ connections: connections ?? 0, rate: rate ?? 0 });
  if (samples.length > CHART_POINTS) samples = samples.slice(-CHART_POINTS);
  renderFigures();
}

function renderFigures() {
  const dash = '–';
  const connections = byId('figure-connections');
  connections.textContent = figures.connections === null ? dash : formatNumber(figures.connections);
  connections.dataset.value = figures.connections === null ? '' : String(figures.connections);
  const rate = byId('figure-rate');
  rate.textContent = figures.rate === null ? dash : formatNumber(figures.rate, 1);
  rate.dataset.value = figures.rate === null ? '' : String(figures.rate);
  const p99 = byId('figure-p99');
  if (figures.p99 === null) p99.textContent = dash;
  else p99.textContent = t(figures.p99Over ? 'over' : 'ms', { n: formatNumber(figures.p99, figures.p99 < 10 ? 2 : 0) });
  p99.dataset.value = figures.p99 === null ? '' : String(figures.p99);
  drawChart();
}

const CHART_W = 600;
const CHART_H = 160;
const CHART_PAD = 6;

function buildChart() {
  const host = byId('chart');
  const root = svg('svg', { viewBox: `0 0 ${CHART_W} ${CHART_H}`, class: 'chart-svg', role: 'img', preserveAspectRatio: 'none' });
  const title = svg('title');
  root.append(title);
  for (let i = 1; i < 4; i += 1) {
    const y = CHART_PAD + ((CHART_H - 2 * CHART_PAD) * i) / 4;
    root.append(svg('line', { x1: 0, x2: CHART_W, y1: y, y2: y, class: 'chart-grid' }));
  }
  const conns = svg('polyline', { class: 'chart-line chart-conns', points: '' });
  const rate = svg('polyline', { class: 'chart-line chart-rate', points: '' });
  root.append(conns, rate);
  host.replaceChildren(root);
  chartParts = { root, title, conns, rate };
}

function points(values) {
  const max = Math.max(1, ...values);
  const step = (CHART_W - 2 * CHART_PAD) / (CHART_POINTS - 1);
  const offset = CHART_POINTS - values.length;
  return values.map((value, i) => {
    const x = CHART_PAD + (offset + i) * step;
    const y = CHART_H - CHART_PAD - (value / max) * (CHART_H - 2 * CHART_PAD);
    return `${x.toFixed(1)},${y.toFixed(1)}`;
  }).join(' ');
}

function drawChart() {
  if (!chartParts) return;
  const label = t('chartLabel', { n: samples.length });
  chartParts.title.textContent = label;
  chartParts.root.setAttribute('aria-label', label);
  chartParts.conns.setAttribute('points', points(samples.map((s) => s.connections)));
  chartParts.rate.setAttribute('points', points(samples.map((s) => s.rate)));
}

// MARK: - Start

function boot() {
  wireSignIn();
  wireComposer();
  byId('lang-switch').addEventListener('click', () => setLanguage(lang === 'ar' ? 'en' : 'ar'));
  byId('signout').addEventListener('click', () => signOut());
  byId('sessions-refresh').addEventListener('click', () => refreshSessions());
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
  applyLanguage();
  const stored = loadSession();
  if (stored) startSession(stored);
  else showSignIn();
}

boot();
