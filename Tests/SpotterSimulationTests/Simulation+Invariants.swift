import SpotterCore
import SpotterProtocol

/// The invariants, checked after every step (and some as things happen: an acknowledgement, an event reaching a
/// device, a quota pushed):
/// - **acked durable**: every acknowledged record is in the log as it was acknowledged (checked when acked, after
///   every restart, and at the end);
/// - **applied once**: a process applies each of its commits once and never one its load included; a message's
///   (side, client_message_id) is in the log once (within the idempotency window); every acknowledgement of a
///   message names the same seq; at the end every record is applied;
/// - **seqs unique and gapless**: per thread the log's messages have seqs 1, 2, 3…, and no record's seq goes
///   below an earlier record's of its thread;
/// - **held sessions never overlap**: no user holds two overlapping sessions (scheduled, reschedule requested, in
///   progress), in the core's book (which after a start is the log's sessions);
/// - **quotas exact** (`--tiers`): a client's count in the core, and every quota pushed to them, is the log's
///   count of their messages this month plus those decided and not yet in the log; no month in the log holds
///   more of a client's messages than their tier allows;
/// - **socket prefix**: what each device was sent is, in order, the log's records for its user after the cursor
///   it started from, none skipped, none twice, none not yet in the log; at the end, all of them;
/// - **changes stick**: an acknowledged edit's text is its message's in the log when acknowledged (unless deleted
///   meanwhile); an acknowledged delete's message is a tombstone in the log from then on, through every crash and
///   recovery, and no edit record keeps text of a deleted message (`checkChanges`);
/// - **views agree with the log** (`checkViews`): each thread's committed seq in the core is the log's newest, and
///   the seq it gives out next follows the log and what is in flight.
extension Simulation {
    struct Checks {
        /// Log records already scanned.
        var scanned = 0
        var lastMessageSeq: [Int64: Int64] = [:]
        var newestSeq: [Int64: Int64] = [:]
        /// Per thread, messages so far; each (thread, side, client_message_id)'s ordinal among them.
        var messages: [Int64: Int] = [:]
        var keys: [String: Int] = [:]
        /// Each client's durable messages (not system ones): when each was sent.
        var clientMessages: [String: [Int64]] = [:]
        var clientMessagesScanned = 0
        /// Who a record's events go to, by position.
        var recipients: [Int64: [String]] = [:]
    }

    /// **changes stick**: every message whose delete was acknowledged is a tombstone in the log, and no change
    /// record keeps the text of a deleted message.
    func checkChanges() {
        for record in log.records {
            if let message = record.content.message, deletedMessages.contains(MessageKey(threadNo: record.threadNo, seq: record.seq)),
               !message.isDeleted {
                violation("changes stick", "t\(record.threadNo)#\(record.seq): its delete was acknowledged, the log holds it again")
            }
            if let change = record.content.change, case .edit(let body?, _) = change.change,
               deletedMessages.contains(MessageKey(threadNo: record.threadNo, seq: change.target)) {
                violation("changes stick", "t\(record.threadNo)#\(change.target) deleted, an edit record keeps \(body)")
            }
        }
    }

    func checkAfterStep() {
        scanLog()
        checkSessions()
        if features.tiers, !shell.isRecovering { checkQuotas() }
        if options.checkViews { checkViews() }
        if options.checkReceipts, !shell.isRecovering { checkReceipts() }
        if !deletedMessages.isEmpty { checkChanges() }
    }

    func checkAfterRestart() {
        for record in acked where !isDurable(record) {
            return violation("acked durable", "\(SimLog.describe(record)) was acknowledged and is not in the log after the restart")
        }
    }

    /// What holds only once nothing is in flight.
    func finalChecks() {
        checkAfterRestart()
        guard failure == nil else { return }
        for record in log.records where record.pos > shell.loadedPosition && !shell.applied.contains(record.pos) {
            return violation("applied once", "\(SimLog.describe(record)) never applied")
        }
        for device in devices {
            guard let socket = device.socket else { continue }
            guard socket.delivery == .live else { return violation("socket prefix", "\(device.name) never went live") }
            for record in log.records.dropFirst(Int(device.scanned)) where mustReach(record).contains(device.userID) {
                return violation("socket prefix", "\(device.name) never got \(SimLog.describe(record))")
            }
        }
    }

    // MARK: - Acknowledged records

    func checkAcked(_ records: [ChatRecord]) {
        for record in records {
            guard isDurable(record) else {
                return violation("acked durable", "\(SimLog.describe(record)) acknowledged, the log holds "
                                 + (record.pos >= 1 && record.pos <= log.records.count ? SimLog.describe(log.records[Int(record.pos) - 1]) : "nothing") + " there")
            }
            acked.append(record)
        }
    }

    /// The record is in the log at its position as acknowledged; a message or a change record as a later change
    /// rewrote it (`MessageRecord.applying`, an edit's text forgotten) counts as the same.
    private func isDurable(_ record: ChatRecord) -> Bool {
        guard record.pos >= 1 && record.pos <= log.records.count else { return false }
        let stored = log.records[Int(record.pos) - 1]
        if stored == record { return true }
        var same = stored
        switch (record.content, stored.content) {
        case (.message(let acked), .message(let now)) where acked.clientMessageID == now.clientMessageID && acked.kind == now.kind
            && (now.editedAt != nil || now.isDeleted):
            same.content = record.content
        case (.change(let acked), .change(let now)) where acked.change.forgotten == now.change && acked.target == now.target:
            same.content = record.content
        default:
            return false
        }
        return same == record
    }

    // MARK: - Seqs and client_message_ids

    /// The records appended since the last step, in order.
    private func scanLog() {
        while checks.scanned < log.records.count, failure == nil {
            let record = log.records[checks.scanned]
            checks.scanned += 1
            let no = record.threadNo
            if record.isThreadMessage {
                let last = checks.lastMessageSeq[no] ?? 0
                if record.seq <= last {
                    violation("seqs unique and gapless", "t\(no): seq \(record.seq) given twice (\(SimLog.describe(record)), after seq \(last))")
                } else if record.seq > last + 1 {
                    violation("seqs unique and gapless", "t\(no): seq \(record.seq) after seq \(last) (\(SimLog.describe(record)))")
                }
                checks.lastMessageSeq[no] = record.seq
            } else if record.seq < checks.newestSeq[no] ?? 0 {
                violation("seqs unique and gapless", "t\(no): \(SimLog.describe(record)) after seq \(checks.newestSeq[no] ?? 0) "
                          + "(the thread's seq went back: its next message repeats one)")
            }
            checks.newestSeq[no] = max(checks.newestSeq[no] ?? 0, record.seq)
            if let ref = record.content.message?.clientMessageID {
                let ordinal = (checks.messages[no] ?? 0) + 1
                checks.messages[no] = ordinal
                let key = "\(no)|\(record.side.rawValue)|\(ref)"
                if let earlier = checks.keys[key], ordinal - earlier <= ChatState.windowSize {
                    violation("applied once", "t\(no): \(ref) is in the log twice (\(SimLog.describe(record)))")
                }
                checks.keys[key] = ordinal
            }
        }
    }

    // MARK: - Sessions

    private func checkSessions() {
        var held: [String: [Session]] = [:]
        for session in shell.core.sessions.sessions.values where session.status.holdsTime {
            held[session.coachID, default: []].append(session)
            held[session.clientID, default: []].append(session)
        }
        for user in held.keys.sorted() {
            var reach: (end: Int64, id: String)?
            for session in held[user]!.sorted(by: { ($0.start, $0.id) < ($1.start, $1.id) }) {
                if let reach, session.start < reach.end {
                    return violation("held sessions never overlap", "\(user) holds \(reach.id) and \(session.id) "
                                     + "(\(session.status.rawValue) at \(session.start))")
                }
                if session.end > reach?.end ?? .min { reach = (session.end, session.id) }
            }
        }
    }

    // MARK: - Quotas

    private func checkQuotas() {
        for client in clients where shell.core.quotas.isLoaded(client) {
            guard let (tier, month) = meter(client) else { continue }
            let used = shell.core.quotas.use(client, tier: tier, month: month).used
            let expected = messages(of: client, since: month.startsAt)
            if used != expected {
                return violation("quotas exact", "\(client): the core counts \(used) this month, the log and what is in flight \(expected)")
            }
            if !retiered.contains(client), let limit = tier.messagesPerMonth,
               durableMessages(of: client, since: month.startsAt) > limit {
                return violation("quotas exact", "\(client) has \(durableMessages(of: client, since: month.startsAt)) messages "
                                 + "this month, over \(tier.rawValue)'s \(limit)")
            }
        }
    }

    /// A quota pushed to a client after a commit.
    func quotaPushed(_ client: String, used: Int) {
        guard let (_, month) = meter(client) else { return }
        let expected = messages(of: client, since: month.startsAt)
        note("  quota pushed to \(client): \(used) used")
        if used != expected {
            violation("quotas exact", "\(client) was shown \(used) messages used, the log and what is in flight hold \(expected) "
                      + "(in the log \(durableMessages(of: client, since: month.startsAt)), since \(month.startsAt))")
        }
    }

    private func meter(_ client: String) -> (Tier, QuotaMonth)? {
        guard let person = people[client] else { return nil }
        return (Tier(stored: person.tier ?? Tier.freemium.rawValue), QuotaMonth(at: now, in: TimeZoneRules.zone(person.timeZone)))
    }

    /// A client's messages since `since`: in the log, and decided but not yet written.
    private func messages(of client: String, since: Int64) -> Int {
        durableMessages(of: client, since: since) + shell.ledger.filter { entry in
            !entry.written && counts(entry.record, of: client) && entry.record.at >= since
        }.count
    }

    private func durableMessages(of client: String, since: Int64) -> Int {
        while checks.clientMessagesScanned < log.records.count {
            let record = log.records[checks.clientMessagesScanned]
            checks.clientMessagesScanned += 1
            if let owner = log.thread(no: record.threadNo)?.clientID, counts(record, of: owner) {
                checks.clientMessages[owner, default: []].append(record.at)
            }
        }
        return (checks.clientMessages[client] ?? []).filter { $0 >= since }.count
    }

    private func counts(_ record: ChatRecord, of client: String) -> Bool {
        record.side == .client && record.content.message.map { $0.kind != .system } == true
            && log.thread(no: record.threadNo)?.clientID == client
    }

    // MARK: - Sockets

    /// Who must get a record's event: its recipients, but for an edit or a delete, whose event a later change of the
    /// same message may make moot (an edit overtaken by a delete is not sent, live or in a replay).
    func mustReach(_ record: ChatRecord) -> [String] {
        record.kind == .change ? [] : recipients(record)
    }

    /// Who a record's events go to (as the core words them; a thread the core has not learned yet is a link's; an
    /// edit or a delete: both participants, whether or not a later change made its event moot).
    func recipients(_ record: ChatRecord) -> [String] {
        if let known = checks.recipients[record.pos] { return known }
        if record.kind == .change, let thread = shell.core.chat.thread(no: record.threadNo) {
            return [thread.coachID, thread.clientID]
        }
        guard shell.core.chat.thread(no: record.threadNo) != nil else {
            guard record.kind == .link, let stored = log.thread(no: record.threadNo) else { return [] }
            return [stored.coachID, stored.clientID]
        }
        let users = shell.core.events(for: record, context()).map(\.userID)
        checks.recipients[record.pos] = users
        return users
    }

    /// A logged event reached a device: it is the next record of the log for its user.
    func saw(_ device: SimDevice, _ cursor: Int64) {
        stats.eventsSeen += 1
        hash.add("\(step) \(device.name) ← \(cursor)")
        guard cursor > device.scanned else {
            return violation("socket prefix", "\(device.name) got \(cursor) after \(device.scanned): twice, or out of order")
        }
        guard cursor <= log.records.count else {
            return violation("socket prefix", "\(device.name) got \(cursor), which is not in the log (\(log.records.count) records)")
        }
        for record in log.records[Int(device.scanned)..<Int(cursor - 1)] where mustReach(record).contains(device.userID) {
            return violation("socket prefix", "\(device.name) got \(cursor) but never \(SimLog.describe(record))")
        }
        let record = log.records[Int(cursor) - 1]
        guard recipients(record).contains(device.userID) else {
            return violation("socket prefix", "\(device.name) got \(SimLog.describe(record)), which is not for it")
        }
        device.scanned = cursor
    }

    // MARK: - The core's views against the log

    /// Each thread's committed seq is the log's newest and the next seq it gives follows the log and what is in
    /// flight; checked when the loop has taken every result of the writer (otherwise durable records wait in its
    /// inbox) and not while a failed append is being recovered from.
    private func checkViews() {
        guard log.inbox.isEmpty, !shell.isRecovering else { return }
        for stored in log.threads {
            guard let thread = shell.core.chat.thread(no: stored.no) else {
                return violation("views agree with the log", "t\(stored.no) is in the log, not in the core")
            }
            let newest = checks.newestSeq[stored.no] ?? 0
            if thread.committedSeq != newest {
                return violation("views agree with the log", "t\(stored.no): the core's committed seq is \(thread.committedSeq), "
                                 + "the log's newest \(newest)")
            }
            let pending = shell.ledger.filter { !$0.written && $0.record.threadNo == stored.no }.map(\.record.seq).max() ?? 0
            if thread.lastSeq != max(newest, pending) {
                return violation("views agree with the log", "t\(stored.no): the core's last seq is \(thread.lastSeq), the log's newest "
                                 + "\(newest), in flight \(pending)")
            }
        }
    }

    private func checkReceipts() {
        for stored in log.threads {
            guard let thread = shell.core.chat.thread(no: stored.no) else { continue }
            for side in [Side.coach, .client] where thread.readSeq(side) > thread.lastSeq || thread.deliveredSeq(side) > thread.lastSeq {
                return violation("receipts within seqs", "t\(stored.no): \(side) read \(thread.readSeq(side)), delivered "
                                 + "\(thread.deliveredSeq(side)), last seq \(thread.lastSeq)")
            }
        }
    }
}
