// Types of spotter.js, Spotter's JavaScript client. The wire contract they describe is Protocol/README.md; the
// JSON Schemas of each body are in Protocol/schemas/.

export declare const PROTOCOL: 'spotter.v1';

/** A typed error: the server's (`code` from Protocol/errors.md) or the client's own
 * (`connection_lost`, `closed`, `timeout`, `revoked`, `signed_out`). */
export declare class SpotterError extends Error {
  readonly code: string;
  /** The request field at fault, as on the wire. */
  readonly field?: string;
  /** Seconds to wait before trying again (429s). */
  readonly retryAfter?: number;
  /** The HTTP status, for errors of HTTP calls. */
  readonly status?: number;
}

export interface Tokens {
  accessToken: string;
  refreshToken: string;
  user?: User;
}

export interface SpotterClientOptions {
  /** The server, e.g. `https://chat.example.com` (default: the page's origin). */
  url?: string;
  accessToken: string;
  refreshToken?: string;
  /** The last cursor the app processed (persisted by `onCursor`); without it the socket starts from now. */
  cursor?: number;
  /** Called with each new cursor, in increasing order (and once with the server's cursor after a `reset`). */
  onCursor?: (cursor: number) => void;
  /** Called with new tokens after every rotation: persist them. */
  onTokens?: (tokens: Tokens) => void;
  /** The app's own refresh (e.g. shared by several tabs): given the refresh token, returns new tokens. Without it
   * the client rotates them itself (`auth.refresh` on the socket, `POST /v1/auth/refresh` over HTTP). */
  refresh?: (refreshToken: string) => Promise<{ accessToken: string; refreshToken: string } | { access_token: string; refresh_token: string }>;
  /** `en` or `ar`: the language of HTTP error messages (the socket uses the browser's Accept-Language or the saved one). */
  language?: 'en' | 'ar';
  /** A WebSocket constructor with the browser's API (default: globalThis.WebSocket). */
  WebSocket?: new (url: string, protocols?: string | string[]) => WebSocket;
  fetch?: typeof fetch;
  /** The reconnect delay is a random share of min(maxDelayMs, minDelayMs·2^attempt). Defaults 250 and 30,000. */
  minDelayMs?: number;
  maxDelayMs?: number;
  /** A command without a reply after this long is rejected with `timeout` (a send is sent again). Default 15,000. */
  commandTimeoutMs?: number;
  /** A connect that has not reached the server's `hello` after this many ms is given up (event `connect_timeout`)
   * and retried with the reconnect backoff; a connect that ends in `error` without `close` is retried the same way.
   * Default 10,000. */
  connectTimeoutMs?: number;
  random?: () => number;
}

export type ConnectionState = 'idle' | 'connecting' | 'replaying' | 'live' | 'waiting' | 'closed';

export interface User {
  id: string;
  role: 'client' | 'coach' | 'admin';
  full_name?: string | null;
  email?: string | null;
  phone?: string | null;
  language: string;
  onboarding_completed: boolean;
  time_zone: string;
  avatar_url?: string;
  /** Only on an erased account's tombstone (an admin's list): when it was erased, in Unix seconds. */
  erased_at?: number;
}

export interface Message {
  thread_id: string;
  seq: number;
  /** Absent on the server's session messages; a service's system message carries the user of its side. */
  sender_id?: string;
  kind: 'text' | 'meal_log' | 'system';
  text?: string;
  meal?: Record<string, unknown>;
  client_message_id?: string;
  created_at: number;
  session_id?: string;
  attachments?: { id: string; type: string; bytes: number; thumbnail_url?: string }[];
  /** When the sender last edited it. */
  edited_at?: number;
  /** A tombstone: the message was deleted (no text, meal or attachments). */
  deleted_at?: number;
}

/** Events by `type`. Logged events carry a `cursor`; the client delivers each once, in order. */
export interface SpotterEvents {
  state: { type: 'state'; state: ConnectionState; retryInMs?: number; reason?: string };
  hello: { type: 'hello'; protocol: string; user: User; expires_at: number; cursor: number };
  live: { type: 'live'; cursor: number };
  disconnect: { type: 'disconnect'; code: number; reason: string };
  /** A connect reached no `hello` within `connectTimeoutMs`: it is abandoned and retried (a `disconnect` follows). */
  connect_timeout: { type: 'connect_timeout'; timeoutMs: number };
  /** The session was revoked (4003, or a refused connect with `session_revoked`): sign in again. Also when the
   * account was erased (4004): forget its data. */
  revoked: { type: 'revoked'; error?: SpotterError };
  /** The tokens could not be refreshed: sign in again. */
  signed_out: { type: 'signed_out'; error?: SpotterError };
  /** The stored cursor cannot be resumed: reload `threads` and `history`. */
  reset: { type: 'reset'; error: SpotterError };
  error: { type: 'error'; error: SpotterError };
  outbox: { type: 'outbox'; pending: number };
  'auth.expiring': { type: 'auth.expiring'; expires_at: number; seconds_left: number };
  message: { type: 'message'; cursor: number; message: Message; unread: number; total_unread: number };
  unread: { type: 'unread'; cursor: number; thread_id: string; unread: number; total_unread: number; read_seq: number };
  receipt: { type: 'receipt'; cursor: number; thread_id: string; user_id: string; delivered_seq: number; read_seq: number };
  thread: { type: 'thread'; cursor: number; thread_id: string; peer_id: string; peer_name: string | null; active: boolean };
  presence: { type: 'presence'; user_id: string; online: boolean; last_seen_at?: number };
  typing: { type: 'typing'; thread_id: string; user_id: string; expires_in: number };
  session: { type: 'session'; cursor: number; change: string; session: Record<string, unknown>; message: Message; unread: number; total_unread: number };
  /** A change of the coaching record (a `daily_check_in` too: `daily_check_in.created` / `.updated`). */
  record: { type: 'record'; cursor: number; thread_id: string; change: string; daily_check_in?: DailyCheckIn; [key: string]: unknown };
  client_card: { type: 'client_card'; card: Record<string, unknown> };
  /** A group challenge's counts moved (a join, leave, creation, finish): to the coach and every client in it. */
  challenge_participants: { type: 'challenge_participants'; participation: ChallengeParticipation };
  quota: { type: 'quota'; [key: string]: unknown };
  tier: { type: 'tier'; cursor: number; [key: string]: unknown };
  rating_prompt: { type: 'rating_prompt'; cursor: number; [key: string]: unknown };
  'message.edited': { type: 'message.edited'; cursor: number; thread_id: string; seq: number; text: string;
    attachments?: { id: string; type: string; bytes: number; thumbnail_url?: string }[]; edited_at: number };
  'message.deleted': { type: 'message.deleted'; cursor: number; thread_id: string; seq: number; by: 'sender' | 'admin' | 'erasure'; deleted_at: number };
  /** The peer's account was erased: their messages read as tombstones, their name is gone. */
  'user.erased': { type: 'user.erased'; cursor: number; thread_id: string; user_id: string };
  '*': { type: string; [key: string]: unknown };
}

/** Commands by `type`: their fields and their results (Protocol/README.md has every one). */
export interface SpotterCommands {
  me: [{}, User];
  threads: [{}, { threads: Record<string, unknown>[]; total_unread: number; cursor: number }];
  history: [{ thread_id: string; before_seq?: number; limit?: number }, { messages: Message[]; has_more: boolean }];
  'receipt.delivered': [{ thread_id: string; seq: number }, { unread: number; total_unread: number }];
  'thread.read': [{ thread_id: string; seq: number }, { unread: number; total_unread: number }];
  typing: [{ thread_id: string }, {}];
  /** The app went to the background (or came back) on a socket it keeps: while all are, pushes reach its devices. */
  app_state: [{ state: 'background' | 'foreground' }, { state: 'background' | 'foreground' }];
  /** The sender edits their text message (within the server's edit window): the reply is the message as it now is. */
  'message.edit': [{ thread_id: string; seq: number; text: string }, Message];
  /** The sender deletes their message (any time): the reply is its tombstone (`deleted_at`, no text). */
  'message.delete': [{ thread_id: string; seq: number }, Message];
  'auth.refresh': [{ refresh_token: string }, { session: Record<string, unknown>; expires_at: number }];
  'session.invite': [{ thread_id: string; start: number; duration_minutes: number; purpose: string }, Record<string, unknown>];
  'session.request': [{ thread_id: string; start: number; duration_minutes: number; purpose: string }, Record<string, unknown>];
  'session.act': [{ session_id: string; action: string; start?: number; reason?: string }, Record<string, unknown>];
  sessions: [{ from?: number; to?: number; limit?: number; cursor?: string },
    { sessions: Record<string, unknown>[]; pending_resolutions: number; next_cursor: string | null }];
  dashboard: [{ from?: number; to?: number }, Record<string, unknown>];
  record: [{ thread_id: string; limit?: number; cursor?: string },
    { challenges_next: string | null; check_ins_next: string | null; measurements_next: string | null; [key: string]: unknown }];
  meals: [{ thread_id?: string; before?: number; limit?: number }, Record<string, unknown>];
  /** A client joins their current coach's group challenge (7, 14 or 30 days) from `start_date` (default today). */
  'challenge.join': [{ template_id: string; start_date?: string },
    { change: 'challenge.joined'; challenge: Record<string, unknown>; participation: ChallengeParticipation }];
  /** The client leaves a pending or active challenge of theirs (`challenge.unchanged` when left already). */
  'challenge.leave': [{ challenge_id: string },
    { change: 'challenge.left' | 'challenge.unchanged'; challenge: Record<string, unknown>; participation?: ChallengeParticipation }];
  /** A coach's feed of what their current clients did, newest first; `before` an item's cursor. */
  activity: [{ thread_id?: string; before?: number; limit?: number },
    { items: { cursor: number; thread_id: string; client_id: string; at: number; kind: string; change?: string;
      message?: Message; record?: Record<string, unknown>; session?: Record<string, unknown> }[]; has_more: boolean }];
  /** A client's current coach's group challenges (with their own open one), or a coach's own. */
  'challenge.groups': [{}, { groups: { participation: ChallengeParticipation; challenge_id?: string }[] }];
  /** A coach replaces their availability whole (Protocol/README "Availability and free slots"). */
  'availability.set': [Partial<Availability> & { time_zone: string }, { availability: Availability }];
  /** A coach reads their availability (null until saved). */
  'availability.get': [{}, { availability: Availability | null }];
  /** The coach or the client of a thread: free starts of a session, shown in `time_zone` (default the asker's). */
  'availability.slots': [{ thread_id: string; duration_minutes: number; from: number; to: number; step_minutes?: number; time_zone?: string },
    FreeSlots];
  /** A body-fat goal; an active one is refused (`goal_active`) unless `replace` is true. The goal carries its plan. */
  'goal.set': [{ thread_id: string; kind: 'cutting' | 'bulking'; target_percent: number; replace?: boolean; weight_kg?: number;
    height_cm?: number; age?: number; activity?: 'sedentary' | 'light' | 'moderate' | 'active' | 'very_active' },
    { change: string; goal: Record<string, unknown> }];
  /** Today's check-in in the client's zone; a second one the same day replaces it (`daily_check_in.updated`). */
  'daily_check_in.submit': [{ thread_id: string; mood: number; soreness: number; stress: number; sick?: boolean; notes?: string },
    { change: 'daily_check_in.created' | 'daily_check_in.updated'; daily_check_in: DailyCheckIn }];
  /** The client's daily check-ins, newest day first; `next` is the `before` of the next page. */
  daily_check_ins: [{ thread_id: string; before?: string; limit?: number },
    { thread_id: string; client_id: string; today: string; check_ins: DailyCheckIn[]; next: string | null }];
}

/** Spans of a day in the coach's zone, "HH:MM" to "HH:MM" ("24:00": the day's end). */
export interface AvailabilityHours { start: string; end: string }

export interface Availability {
  time_zone: string;
  weekly: Partial<Record<'mon' | 'tue' | 'wed' | 'thu' | 'fri' | 'sat' | 'sun', AvailabilityHours[]>>;
  exceptions: { date: string; hours: AvailabilityHours[] }[];
  buffer_before_minutes: number;
  buffer_after_minutes: number;
  minimum_notice_minutes: number;
  max_sessions_per_day?: number | null;
}

export interface FreeSlots {
  availability_set: boolean;
  truncated: boolean;
  time_zone: string;
  coach_time_zone?: string | null;
  /** Unix seconds; `local` is the start in `time_zone` ("2026-03-09T09:00-04:00"). */
  slots: { start: number; end: number; local: string }[];
}

/** A group challenge's live counts: clients in it (pending or active) and clients who finished it; never who. */
export interface ChallengeParticipation {
  template_id: string;
  coach_id: string;
  name: string;
  description?: string;
  days: 7 | 14 | 30;
  participants: number;
  finished: number;
}

/** A day's check-in (scales 1–5; `overall_score` 0–100, computed by the server). */
export interface DailyCheckIn {
  id: string;
  client_id: string;
  /** `YYYY-MM-DD` in the client's zone. */
  day: string;
  mood: number;
  soreness: number;
  stress: number;
  sick: boolean;
  notes?: string;
  overall_score: number;
  created_at: number;
  updated_at: number;
}

export declare class SpotterClient {
  constructor(options: SpotterClientOptions);
  readonly state: ConnectionState;
  /** The last cursor delivered (persist it through `onCursor`). */
  readonly cursor?: number;
  readonly user?: User;
  readonly accessToken: string;
  readonly refreshToken?: string;
  /** Sends not yet acknowledged, oldest first. */
  readonly unacknowledged: { clientMessageId: string; threadId: string; body: Record<string, unknown> }[];

  /** Opens the socket and keeps it open (reconnecting) until `close()` or a revoked session. */
  connect(): void;
  /** Closes for good; unacknowledged sends are rejected with `closed`. */
  close(): void;

  on<K extends keyof SpotterEvents>(type: K, listener: (event: SpotterEvents[K]) => void): () => void;
  off<K extends keyof SpotterEvents>(type: K, listener: (event: SpotterEvents[K]) => void): void;

  command<K extends keyof SpotterCommands>(type: K, fields?: SpotterCommands[K][0]): Promise<SpotterCommands[K][1]>;
  command(type: string, fields?: Record<string, unknown>): Promise<any>;

  /** `availability.slots`: free starts of a session with the other side of the thread (Unix seconds). */
  freeSlots(threadId: string, options: { durationMinutes: number; from: number; to: number; stepMinutes?: number; timeZone?: string }): Promise<FreeSlots>;

  /** Sends a message; kept and resent with the same client_message_id until acknowledged; resolves once. */
  send(threadId: string, body: { text: string; attachments?: string[] } | { kind: 'meal_log'; meal: Record<string, unknown> },
       options?: { clientMessageId?: string }): Promise<Message>;

  /** An HTTP call with this client's token (refreshed once if expired). */
  api(method: string, path: string, body?: unknown): Promise<any>;

  static signIn(url: string, email: string, password: string, options?: { language?: 'en' | 'ar' }): Promise<SessionResponse>;
  static requestCode(url: string, phone: string, options?: { language?: 'en' | 'ar' }): Promise<{ phone: string; expires_in: number; resend_after: number; dev_code?: string }>;
  static verifyCode(url: string, phone: string, code: string, options?: { language?: 'en' | 'ar' }): Promise<SessionResponse>;
}

export interface SessionResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  user: User;
}

export declare function tokenExpiry(token: string): number | undefined;
export declare function backoffDelay(attempt: number, options?: { minDelayMs?: number; maxDelayMs?: number; random?: () => number }): number;
export declare function retryAfterFromReason(reason: string): number | undefined;
