// What survives a reload: the tokens and the last event cursor, in sessionStorage only (never localStorage, never
// the URL), so they end with the tab.

const SESSION_KEY = 'spotter.console.session'; // sessionStorage: {access_token, refresh_token, user}
const CURSOR_KEY = 'spotter.console.cursor'; // sessionStorage: the last processed event cursor

export function loadSession() {
  try {
    const session = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? 'null');
    return session?.access_token && session?.refresh_token && session?.user ? session : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  sessionStorage.setItem(SESSION_KEY, JSON.stringify(session));
}

export function clearStoredSession() {
  sessionStorage.removeItem(SESSION_KEY);
  sessionStorage.removeItem(CURSOR_KEY);
}

/** The last event cursor saved, or undefined. */
export function loadCursor() {
  const saved = Number(sessionStorage.getItem(CURSOR_KEY));
  return Number.isInteger(saved) && saved > 0 ? saved : undefined;
}

export function saveCursor(cursor) {
  sessionStorage.setItem(CURSOR_KEY, String(cursor));
}
