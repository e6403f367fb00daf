import Foundation
import Synchronization

/// Clients sending `message.send` as fast as their acks come back, each sender on a thread of its own, until the
/// server goes away under them (the kill a crash test is about). Sender `name`'s ids are "<name>-<n>" with the
/// text `MessageBurst.text(n)`; a send refused for the moment (`rate_limited`) waits a little and the sender goes
/// on with its next id. Every 50 sends a sender pauses briefly, leaving the server's timers room on two cores.
public final class MessageBurst: Sendable {
    private let acked = Mutex<[String: Int]>([:])
    private let group = DispatchGroup()

    /// Starts the senders at once.
    public init(_ senders: [(name: String, socket: SpotterSocket, threadID: String)]) {
        for sender in senders {
            group.enter()
            Thread.detachNewThread { [self] in
                defer { group.leave() }
                for n in 1...1_000_000 {
                    let id = "\(sender.name)-\(n)"
                    let fields: [String: Any] = ["thread_id": sender.threadID, "client_message_id": id, "text": MessageBurst.text(n)]
                    guard let reply = try? sender.socket.command("message.send", fields) else { return }  // the server is gone
                    if let seq = (reply["result"] as? [String: Any])?["seq"] as? Int {
                        acked.withLock { $0[id] = seq }
                    } else {
                        Thread.sleep(forTimeInterval: 0.05)
                    }
                    if n % 50 == 0 { Thread.sleep(forTimeInterval: 0.02) }
                }
            }
        }
    }

    /// The text of a sender's `n`th message (what a retry with the same id must send again).
    public static func text(_ n: some CustomStringConvertible) -> String { "m \(n)" }

    /// What has been acknowledged so far (client_message_id → seq), while the senders go on.
    public func acknowledged() -> [String: Int] { acked.withLock { $0 } }

    /// Waits until every sender has stopped (its server is gone) and returns what was acknowledged:
    /// client_message_id → seq.
    public func waitForSenders() -> [String: Int] {
        group.wait()
        return acked.withLock { $0 }
    }
}
