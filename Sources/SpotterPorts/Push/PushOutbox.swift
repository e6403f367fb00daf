import SpotterCore

/// One planned push for one device, on its way into the outbox.
public struct PushEntry: Sendable, Equatable {
    public var push: PlannedPush
    public var deviceID: String
    public var platform: PushAddress.Platform

    public init(push: PlannedPush, deviceID: String, platform: PushAddress.Platform) {
        self.push = push
        self.deviceID = deviceID
        self.platform = platform
    }

    /// Derived from the record and the device: the same every time the record is handled.
    public var id: String { "pos:\(push.pos):\(deviceID)" }
}

/// How the outbox takes pushes in.
public struct PushIntake: Sendable, Equatable {
    /// A message push for a thread whose last visible push to the device went out less than this ago waits for
    /// the window's end, and messages arriving meanwhile are counted into it ("3 new messages from Sara"). Zero: no
    /// coalescing at all, every message its own push.
    public var coalesceMilliseconds: Int64
    /// Pending pushes per platform at most; past it a new push for that platform is dropped (`droppedFull`).
    public var queueLimit: Int
    /// A read sends a silent badge update to a device only if it was sent a visible push within this.
    public var badgeWindowMilliseconds = PushIntake.defaultBadgeWindowMilliseconds
    public static let defaultBadgeWindowMilliseconds: Int64 = 3_600_000

    public init(coalesceMilliseconds: Int64, queueLimit: Int) {
        self.coalesceMilliseconds = coalesceMilliseconds
        self.queueLimit = queueLimit
    }
}

/// What taking a batch in did, for the metrics.
public struct PushIntakeResult: Sendable, Equatable {
    /// New rows.
    public var queued = 0
    /// Message pushes counted into one already waiting.
    public var coalesced = 0
    /// Dropped because their platform's queue was full.
    public var droppedFull: [PushAddress.Platform: Int] = [:]
    /// Message pushes taken back because their thread was read first.
    public var withdrawn = 0

    public init() {}
}

/// A push handed to a provider: the row and its device's current address.
public struct OutboxPush: Sendable, Equatable {
    public var message: PushMessage
    public var deviceID: String
    public var attempts: Int
    public var enqueuedAt: Int64

    public init(message: PushMessage, deviceID: String, attempts: Int, enqueuedAt: Int64) {
        self.message = message
        self.deviceID = deviceID
        self.attempts = attempts
        self.enqueuedAt = enqueuedAt
    }
}

/// What became of a push handed to a provider.
public enum PushDisposition: Sendable, Equatable {
    /// Delivered: kept as sent (for coalescing) until purged.
    case sent
    /// Back to pending, due at `notBefore` (ms).
    case again(notBefore: Int64)
    /// Dropped for good (refused, expired, out of attempts).
    case dropped
    /// The device is gone: it is removed with every push waiting for it.
    case deviceGone
}
