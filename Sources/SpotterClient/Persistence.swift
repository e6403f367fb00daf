import Foundation

/// A send the server has not acknowledged yet: kept, and sent again with the same `client_message_id`, until it is.
public struct OutboxEntry: Codable, Sendable, Hashable {
    public var clientMessageId: String
    public var threadId: String
    public var body: MessageBody

    public init(clientMessageId: String, threadId: String, body: MessageBody) {
        self.clientMessageId = clientMessageId
        self.threadId = threadId
        self.body = body
    }
}

/// What the client keeps across launches: the last cursor it delivered, and its outbox, oldest first. Never tokens
/// (keep those in the Keychain).
public struct PersistedState: Codable, Sendable, Hashable {
    public var cursor: Int?
    public var outbox: [OutboxEntry]

    public init(cursor: Int? = nil, outbox: [OutboxEntry] = []) {
        self.cursor = cursor
        self.outbox = outbox
    }
}

/// Where the client keeps its `PersistedState`. `save` is called on every change (a cursor that moved, a send queued
/// or acknowledged), from the client's actor, and must be quick: the state is small.
public protocol SpotterPersistence: Sendable {
    func load() throws -> PersistedState
    func save(_ state: PersistedState) throws
}

/// Keeps the state in memory only (the default): a new client instance of the same store picks it up, a new process
/// does not.
public final class InMemoryPersistence: SpotterPersistence, @unchecked Sendable {
    private let lock = NSLock()
    private var state: PersistedState

    public init(_ state: PersistedState = PersistedState()) { self.state = state }

    public func load() throws -> PersistedState { lock.locked { state } }
    public func save(_ state: PersistedState) throws { lock.locked { self.state = state } }
}

/// Keeps the state in one JSON file, written atomically (a temporary file in the same folder, then renamed over the
/// old one), so a process killed mid-write leaves the previous state, never half of one. A missing file is an empty
/// state; an unreadable one is an error (the app decides: delete it, or keep it to look at).
public final class FilePersistence: SpotterPersistence, @unchecked Sendable {
    public let url: URL
    private let lock = NSLock()

    public init(url: URL) { self.url = url }

    public func load() throws -> PersistedState {
        try lock.locked {
            guard FileManager.default.fileExists(atPath: url.path) else { return PersistedState() }
            return try JSONDecoder().decode(PersistedState.self, from: Data(contentsOf: url))
        }
    }

    public func save(_ state: PersistedState) throws {
        let data = WireJSON.encode(state)
        try lock.locked {
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try data.write(to: url, options: .atomic)
        }
    }
}
