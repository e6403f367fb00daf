import SpotterCore
import SpotterProtocol

/// One device of a user: it outlives its connections (a crash closes them; the app reconnects and resumes from
/// the newest cursor it holds). What it was sent is checked as it arrives (`Simulation.saw`).
final class SimDevice {
    let userID: String
    let name: String
    /// The newest cursor it holds (the hello's, then each logged event's): where it resumes.
    var cursor: Int64?
    /// Every record for this user up to here reached the device, in order (or came before its first hello).
    var scanned: Int64 = 0
    var socket: SimSocket?
    /// Logged events received.
    var received = 0

    init(userID: String, name: String) {
        self.userID = userID
        self.name = name
    }
}

/// A socket of a device on one process, written again from `AppSocket` (`opened`, `startResume`, `replayPage`,
/// `deliver`, `sendLogged`, `goLive`): the hello's cursor, the quota, a resume in pages read from the durable log
/// while live events wait in a buffer, and the cursor guard that drops what was sent already.
final class SimSocket {
    enum Delivery { case opening, replaying, live }

    let device: SimDevice
    unowned let shell: SimShell
    private(set) var delivery = Delivery.opening
    private var buffered: [Int64] = []
    private var lastSentCursor: Int64 = 0
    private(set) var closed = false
    /// Records per resume page (the server's is 200; small here so that resumes take several pages).
    static let pageSize = 3

    init(device: SimDevice, shell: SimShell) {
        self.device = device
        self.shell = shell
    }

    var userID: String { device.userID }

    /// Connects: `fresh` drops the device's cursor (the app reloaded its lists and follows from the hello).
    func open(fresh: Bool) {
        shell.sockets.append(self)
        device.socket = self
        let cursor = shell.core.chat.lastPos(of: userID)
        lastSentCursor = cursor
        let resume = fresh ? nil : device.cursor
        if resume == nil {
            device.cursor = cursor
            device.scanned = cursor
        }
        shell.quotaView(userID) { [self] _ in
            guard !closed else { return }
            if let resume { startResume(from: resume) } else { goLive() }
        }
    }

    func close() {
        closed = true
        shell.sockets.removeAll { $0 === self }
        if device.socket === self { device.socket = nil }
    }

    private func startResume(from cursor: Int64) {
        guard cursor <= lastSentCursor else {
            // `out_of_range`: the app reloads its lists and follows from the hello.
            shell.world.note("\(device.name): resume from \(cursor) refused (hello \(lastSentCursor)); reloads")
            device.cursor = lastSentCursor
            device.scanned = lastSentCursor
            return goLive()
        }
        delivery = .replaying
        lastSentCursor = cursor
        replayPage(after: cursor)
    }

    private func replayPage(after cursor: Int64) {
        let threadNos = shell.core.chat.threads(of: userID).filter { $0.lastPos > cursor }.map(\.no)
        // The fix of finding 5: no further than what the loop has applied (the rest reaches the socket live).
        let ceiling = shell.options.fixes.contains(.resumeUpToApplied) ? shell.appliedThrough : .max
        shell.log.poolRead("resume \(device.name) after \(cursor)", { $0.records(threadNos: threadNos, after: cursor, limit: Self.pageSize) },
                           done: { [self] read in
            guard !closed else { return }
            let page = read.filter { $0.pos <= ceiling }
            let context = shell.world.context()
            for record in page {
                for (user, _) in shell.core.events(for: record, context) where user == userID { sendLogged(record.pos) }
            }
            guard read.count == Self.pageSize, page.count == read.count, let last = page.last else { return goLive() }
            replayPage(after: last.pos)
        })
    }

    /// A committed event for this user.
    func deliver(cursor: Int64) {
        switch delivery {
        case .opening, .replaying: buffered.append(cursor)
        case .live: sendLogged(cursor)
        }
    }

    private func sendLogged(_ cursor: Int64) {
        guard cursor > lastSentCursor else { return }
        lastSentCursor = cursor
        device.cursor = cursor
        device.received += 1
        shell.world.saw(device, cursor)
    }

    private func goLive() {
        let waiting = buffered
        buffered = []
        delivery = .live
        for cursor in waiting { sendLogged(cursor) }
    }
}
