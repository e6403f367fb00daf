import CNATS
import EventLoop

/// Why the NATS broker could not start (or could not subscribe): what it tried, the server's URL, and libnats's
/// own words.
public struct NATSBrokerError: Error, CustomStringConvertible, Sendable {
    public enum Operation: Sendable, Equatable {
        case connect
        case subscribe(subject: String)
    }

    public let operation: Operation
    public let url: String
    /// libnats's status text, and its last error's detail when it says more.
    public let status: String

    public var description: String {
        switch operation {
        case .connect: "cannot connect to NATS at \(NATSWire.loggable(url: url)): \(status)"
        case .subscribe(let subject): "cannot subscribe to \(subject) on NATS at \(NATSWire.loggable(url: url)): \(status)"
        }
    }
}

/// Where libnats's callbacks land, on its threads: each is handed to the loop. Retained once and never released
/// (a few bytes per broker): libnats may call back until its connection and subscriptions are destroyed, and a
/// callback already running then still holds this pointer. Only `loop`, immutable and Sendable, is read off
/// the loop; `broker` is written and read on the loop only, and is weak so that nothing reaches a closed broker.
final class NATSSink: @unchecked Sendable {
    let loop: Loop
    weak var broker: NATSBroker?

    init(loop: Loop) {
        self.loop = loop
    }

    func message(subject: String, payload: String) {
        loop.execute { [self] in broker?.received(subject: subject, payload: payload) }
    }

    func connection(_ connected: Bool) {
        loop.execute { [self] in broker?.linkChanged(up: connected) }
    }
}

/// One libnats connection, used from the loop thread only (its own threads are libnats's business). Reconnects
/// for ever, every 250 ms, buffering publications meanwhile (8 MB, libnats's default; past that a publish
/// fails at once). Messages of every subscription come through libnats's shared delivery thread, not one
/// thread per subscription (a process holds one subscription per online user).
final class NATSConnection {
    let url: String
    private var raw: OpaquePointer?
    private let sink: UnsafeMutableRawPointer

    /// Connects now (at most `timeout` ms, on the calling thread); a refused or unreachable server throws.
    init(url: String, name: String, sink: NATSSink, timeout: Int64 = 2000) throws {
        self.url = url
        var options: OpaquePointer?
        guard natsOptions_Create(&options) == NATS_OK, let options else {
            throw NATSBrokerError(operation: .connect, url: url, status: Self.lastError(NATS_NO_MEMORY))
        }
        defer { natsOptions_Destroy(options) }
        let status = natsOptions_SetURL(options, url)
        guard status == NATS_OK else { throw NATSBrokerError(operation: .connect, url: url, status: Self.lastError(status)) }
        natsOptions_SetName(options, name)
        natsOptions_SetTimeout(options, timeout)
        // A server that is down at start is the operator's to fix: say so at once instead of retrying quietly.
        natsOptions_SetRetryOnFailedConnect(options, false, nil, nil)
        natsOptions_SetAllowReconnect(options, true)
        natsOptions_SetMaxReconnect(options, -1)
        natsOptions_SetReconnectWait(options, 250)
        // A server that stops answering without closing the socket is found out in about 4 s, not libnats's
        // default of minutes; and a write to it gives up after 1 s (libnats then shuts the socket and
        // reconnects), so a publish on the loop never waits on a stalled server for longer than that.
        natsOptions_SetPingInterval(options, 2000)
        natsOptions_SetMaxPingsOut(options, 2)
        natsOptions_SetWriteDeadline(options, 1000)
        natsOptions_SetNoEcho(options, true)
        // Not `SendAsap`: tried (issue 33 item 4), writing each publication from the loop at once raised
        // nats-server's CPU per message by ~70 % and the other processes' NATS reader threads' by ~50 % (one small
        // TCP write per publication instead of the flusher's coalesced ones), and saved nothing measurable here.
        natsOptions_UseGlobalMessageDelivery(options, true)
        let sink = Unmanaged.passRetained(sink).toOpaque()
        self.sink = sink
        natsOptions_SetDisconnectedCB(options, { _, closure in
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().connection(false)
        }, sink)
        natsOptions_SetReconnectedCB(options, { _, closure in
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().connection(true)
        }, sink)
        var connection: OpaquePointer?
        let connected = natsConnection_Connect(&connection, options)
        guard connected == NATS_OK, let connection else {
            if let connection { natsConnection_Destroy(connection) }
            throw NATSBrokerError(operation: .connect, url: url, status: Self.lastError(connected))
        }
        raw = connection
    }

    /// Queues a message (libnats's flusher thread writes it out). The status says why not: closed, over the
    /// reconnect buffer, over the server's maximum payload, a write that timed out.
    func publish(_ subject: String, _ payload: String) -> natsStatus {
        guard let raw else { return NATS_CONNECTION_CLOSED }
        var text = payload
        return text.withUTF8 { bytes in
            natsConnection_Publish(raw, subject, bytes.baseAddress, Int32(bytes.count))
        }
    }

    func subscribe(_ subject: String) throws -> NATSSubscription {
        guard let raw else {
            throw NATSBrokerError(operation: .subscribe(subject: subject), url: url, status: Self.text(NATS_CONNECTION_CLOSED))
        }
        var subscription: OpaquePointer?
        let status = natsConnection_Subscribe(&subscription, raw, subject, { _, _, message, closure in
            guard let message else { return }
            let subject = String(cString: natsMsg_GetSubject(message))
            let length = Int(natsMsg_GetDataLength(message))
            let payload = natsMsg_GetData(message).map { data in
                String(decoding: UnsafeRawBufferPointer(start: UnsafeRawPointer(data), count: length), as: UTF8.self)
            } ?? ""
            natsMsg_Destroy(message)
            Unmanaged<NATSSink>.fromOpaque(closure!).takeUnretainedValue().message(subject: subject, payload: payload)
        }, sink)
        guard status == NATS_OK, let subscription else {
            throw NATSBrokerError(operation: .subscribe(subject: subject), url: url, status: Self.lastError(status))
        }
        return NATSSubscription(raw: subscription)
    }

    /// Waits (at most `timeout` ms) until the server has everything published so far: the goodbye before closing.
    func flush(timeout: Int64 = 1000) {
        guard let raw else { return }
        _ = natsConnection_FlushTimeout(raw, timeout)
    }

    /// Closes the connection and gives up this handle on it. libnats frees it once the subscriptions, which
    /// hold it too, are destroyed; nothing here touches it after this.
    func close() {
        guard let raw else { return }
        self.raw = nil
        natsConnection_Close(raw)
        natsConnection_Destroy(raw)
    }

    static func text(_ status: natsStatus) -> String { String(cString: natsStatus_GetText(status)) }

    /// The status's text, with the calling thread's last error when that says more ("Invalid Argument" alone
    /// does not say that the port is not a number). libnats prefixes its detail with its source file and line.
    private static func lastError(_ status: natsStatus) -> String {
        let summary = text(status)
        var last = NATS_OK
        guard var detail = nats_GetLastError(&last).map({ String(cString: $0) }) else { return summary }
        if detail.hasPrefix("("), let end = detail.firstRange(of: "): ") { detail = String(detail[end.upperBound...]) }
        return detail.isEmpty || detail == summary ? summary : "\(summary) (\(detail))"
    }
}

/// One subscription, loop thread only. Ending it stops its callbacks (one already under way still only
/// reaches the sink).
final class NATSSubscription {
    private var raw: OpaquePointer?

    init(raw: OpaquePointer) {
        self.raw = raw
    }

    /// Tells the server (when still connected) and frees the subscription. Idempotent.
    func end() {
        guard let raw else { return }
        self.raw = nil
        natsSubscription_Unsubscribe(raw)
        natsSubscription_Destroy(raw)
    }

    deinit { end() }
}
