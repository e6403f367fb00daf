import Foundation

/// Where the connection is.
public enum ConnectionState: Sendable, Hashable {
    /// `connect()` was not called yet.
    case idle
    /// Opening the socket.
    case connecting
    /// Connected with a cursor: the missed events are arriving; commands wait for `live`.
    case replaying
    /// Connected and caught up: commands and sends go out.
    case live
    /// Between attempts (`retryInMilliseconds` when a retry is scheduled).
    case waiting(retryInMilliseconds: Int?)
    /// Stopped: by `close()`, or for good (`revoked`, `signedOut`).
    case closed(StopReason?)
}

/// Why the client stopped for good.
public enum StopReason: String, Sendable, Hashable {
    /// The session was revoked (4003) or the account erased (4004): sign in again.
    case revoked
    /// The refresh token was refused (reused, invalid): sign in again.
    case signedOut = "signed_out"
}

/// Everything the client tells the app, in order. Logged events (`message`, `receipt`, …) come at most once each,
/// in cursor order, across reconnects and restarts.
public enum SpotterEvent: Sendable {
    case state(ConnectionState)
    case hello(Hello)
    /// The replay after a resume is over: events from here on are live.
    case live(cursor: Int)
    case message(MessageEvent)
    case receipt(ReceiptEvent)
    case unread(UnreadEvent)
    case thread(ThreadEvent)
    case session(SessionEvent)
    case presence(PresenceEvent)
    case typing(TypingEvent)
    /// Any other event (record changes, tiers, ratings, message edits, …): its type, its cursor when logged, the frame.
    case other(type: String, cursor: Int?, frame: JSONValue)
    /// The cursor could not be resumed (`cursor_expired`, `out_of_range`): reload `threads` and `history`.
    case reset(SpotterError)
    /// The cursor moved: persist it if the app keeps its own copy (the client's persistence already has it).
    case cursor(Int)
    /// New tokens (rotated on the socket or over HTTP): store them (Keychain).
    case tokens(Tokens)
    /// The server says the token ends soon; the client is refreshing it.
    case authExpiring(AuthExpiringEvent)
    /// A send was stored: one per `client_message_id`.
    case acknowledged(Message)
    /// A send was refused for good (not retryable): it left the outbox.
    case sendFailed(clientMessageId: String, error: SpotterError)
    /// Sends not yet acknowledged.
    case outbox(pending: Int)
    /// The socket ended (1006 when no close frame came).
    case disconnected(code: Int, reason: String)
    /// A connect got no `hello` in time and is retried.
    case connectTimeout
    /// Stopped for good: sign in again.
    case stopped(StopReason, SpotterError?)
    /// An error about the connection that no command is waiting for.
    case error(SpotterError)
}
