import Dispatch
import Foundation
import SpotterCore
import SpotterPorts

/// A push provider in memory: keeps every push handed to it and answers what `answer` says (delivered unless told
/// otherwise), asynchronously, as a real provider does.
public final class RecordingPushProvider: PushProvider, @unchecked Sendable {
    public let platform: PushAddress.Platform
    private let lock = NSLock()
    private var sent: [PushMessage] = []
    private var answerWith: @Sendable (PushMessage) -> PushOutcome = { _ in .delivered }
    private let queue = DispatchQueue(label: "spotter.test.push")

    public init(_ platform: PushAddress.Platform) {
        self.platform = platform
    }

    /// What the provider answers from now on.
    public func answer(_ outcome: @escaping @Sendable (PushMessage) -> PushOutcome) {
        lock.withLock { answerWith = outcome }
    }

    /// Every push handed over so far (attempts that were answered otherwise than delivered included).
    public var messages: [PushMessage] { lock.withLock { sent } }

    public func send(_ message: PushMessage, completion: @escaping @Sendable (PushOutcome) -> Void) {
        let outcome = lock.withLock { () -> PushOutcome in
            sent.append(message)
            return answerWith(message)
        }
        queue.async { completion(outcome) }
    }

    public func shutdown() {}

    /// Forgets the pushes handed over so far.
    public func forget() {
        lock.withLock { sent.removeAll() }
    }

    /// Waits until `count` pushes were handed over (at most `timeout` seconds); returns them all.
    @discardableResult
    public func waitFor(_ count: Int, timeout: TimeInterval = 10) throws -> [PushMessage] {
        try waitUntil(timeout, "\(count) pushes (have \(messages.count): \(messages.map(\.alert?.title)))") { messages.count >= count }
        return messages
    }
}
