import LoadSupport

/// The `quota` scenario (issue 12; the server runs with `--tiers`): Freemium clients send past their month's 20
/// messages at an open-loop rate. Every client must end with exactly 20 accepted (the rest refused with
/// `quota_exceeded`, nothing over-charged), its last `quota` event must say 20, and a retry of its first message
/// (byte for byte, as after a lost ack) must be answered with the same seq, neither refused nor charged.
struct QuotaSummary: Codable {
    var clients: Int
    var limit: Int
    var sent: Int
    var accepted: Int
    var refused: Int
    /// Clients that reached the limit (sent more than 20): the ones the checks below speak of.
    var clientsPastLimit: Int
    var exactlyAtLimit: Int
    /// More than 20 accepted.
    var overCharged: Int
    /// Refused before 20 were accepted.
    var refusedEarly: Int
    /// The last `quota` event's `messages.used` is not what the client had accepted.
    var quotaEventMismatches: Int
    var retriesSameSeq: Int
    var retryFailures: [String: Int]
    var refusalLatencyMicros: LatencySummary
}

extension Runner {
    func runQuota() {
        connectEveryone { [unowned self] in
            let senders = clients.filter { !$0.isCoach }.map(\.index)
            progress("quota: \(senders.count) Freemium clients sending \(fixed(config.rate, 0)) msgs/s for "
                + "\(fixed(config.warmup, 0)) s + \(fixed(config.duration, 0)) s, past their 20 a month")
            startSending(rate: config.rate, senders: senders)
            after(config.warmup) { [unowned self] in
                beginWindow()
                after(config.duration) { [unowned self] in
                    let window = endWindow()
                    stopSending()
                    drain(limit: config.grace) { [unowned self] _ in
                        result.traffic = completeWindow(window)
                        progress("quota: every client retries its first message")
                        for c in senders where clients[c].isLive { clients[c].retryFirstSend() }
                        waitFor(limit: 10, { [unowned self] in
                            senders.allSatisfy { clients[$0].retryOutcome != nil || !clients[$0].isLive }
                        }) { [unowned self] in
                            // The last quota events follow their replies.
                            after(0.5) { [unowned self] in
                                result.quota = quotaSummary(senders)
                                closeOut()
                            }
                        }
                    }
                }
            }
        }
    }

    private func quotaSummary(_ senders: [Int]) -> QuotaSummary {
        let limit = 20
        var summary = QuotaSummary(
            clients: senders.count, limit: limit, sent: 0, accepted: 0, refused: 0, clientsPastLimit: 0, exactlyAtLimit: 0,
            overCharged: 0, refusedEarly: 0, quotaEventMismatches: 0, retriesSameSeq: 0, retryFailures: [:],
            refusalLatencyMicros: LatencySummary(refusalHistogram))
        for c in senders {
            let client = clients[c]
            summary.accepted += client.accepted
            summary.refused += client.quotaRefused
            summary.sent += client.accepted + client.quotaRefused
            if client.accepted > limit { summary.overCharged += 1 }
            if client.quotaRefused > 0 && client.accepted < limit { summary.refusedEarly += 1 }
            if client.accepted + client.quotaRefused > limit {
                summary.clientsPastLimit += 1
                if client.accepted == limit { summary.exactlyAtLimit += 1 }
            }
            if client.lastQuotaUsed != Int64(client.accepted) { summary.quotaEventMismatches += 1 }
            switch client.retryOutcome {
            case "same seq"?: summary.retriesSameSeq += 1
            case let other: summary.retryFailures[other ?? "no answer", default: 0] += 1
            }
        }
        if summary.overCharged > 0 { protocolError("a client was charged past the limit") }
        if summary.refusedEarly > 0 { protocolError("a client was refused before its limit") }
        if summary.quotaEventMismatches > 0 { protocolError("a client's last quota event disagrees with its acks") }
        if !summary.retryFailures.isEmpty { protocolError("a retry of an accepted message was not answered with its seq") }
        return summary
    }
}
