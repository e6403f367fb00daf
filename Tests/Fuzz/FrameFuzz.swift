// libFuzzer target: RFC 6455 frames after the handshake (Sources/WebSocket/WebSocketSession.swift,
// FrameReader.swift, UTF8Validator.swift).
//
// Built as part of the WebSocket module (see Tests/scripts/fuzz.sh), so internal API is visible.
// The input is the byte stream a client sends after its upgrade request. A server-side session
// (64 KiB message limit, so memory stays bounded) reads it all at once, in up to eight pieces cut at
// points derived from the input, and (up to 512 bytes) one byte at a time; the reader promises the
// split does not matter, so the three action lists must be equal. Then:
// - every text message delivered is valid UTF-8 (checked against the standard library) and no
//   message is larger than the limit;
// - nothing follows `closeConnection`;
// - every frame the server sends back (pongs, close frames) reads cleanly as a client would read it;
// - the incremental UTF8Validator agrees with the standard library on the raw input, whole and split;
// - a client-side session reads the same bytes (unmasked frames), split the same ways.

private let fuzzMaxMessageBytes = 64 * 1024

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let hash = fuzzFnv1a(bytes)
    let pieces = fuzzPieces(size: size, cuts: Int(hash & 7), seed: hash)  // up to seven cuts

    for role in [FrameReader.Role.server, .client] {
        let whole = fuzzRun(role, bytes, pieces: [size])
        let split = fuzzRun(role, bytes, pieces: pieces)
        precondition(whole == split, "\(role): actions differ when fed in pieces \(pieces)")
        if size <= 512 {
            let drip = fuzzRun(role, bytes, pieces: Array(repeating: 1, count: size))
            precondition(whole == drip, "\(role): actions differ when fed one byte at a time")
        }
        fuzzCheck(role, whole)
    }

    // The validator on its own, against the standard library.
    let expected = String(validating: bytes, as: UTF8.self) != nil
    precondition(UTF8Validator.isValid(bytes) == expected, "UTF8Validator disagrees with the standard library")
    var validator = UTF8Validator()
    var valid = true
    var offset = 0
    for length in pieces where valid {
        valid = validator.validate(bytes[offset..<(offset + length)])
        offset += length
    }
    precondition((valid && validator.isComplete) == expected, "UTF8Validator disagrees when fed in pieces \(pieces)")
    return 0
}

private struct FuzzRun: Equatable {
    var actions: [WebSocketSession.Action] = []
    var state: WebSocketSession.State = .open
    /// What the session answered to a local close after the input, if it was still open.
    var localClose: [UInt8]?
}

private func fuzzRun(_ role: FrameReader.Role, _ bytes: [UInt8], pieces: [Int]) -> FuzzRun {
    var session = WebSocketSession(role: role, maxMessageBytes: fuzzMaxMessageBytes)
    var result = FuzzRun()
    var closed = false
    var offset = 0
    for length in pieces {
        let piece = Array(bytes[offset..<(offset + length)])
        offset += length
        session.receive(piece) { action in
            precondition(!closed, "\(role): action \(action) after closeConnection")
            if case .closeConnection = action { closed = true }
            result.actions.append(action)
        }
        // Idle cost: a partial message is bounded by the limit (plus the array's growth slack).
        precondition(session.bufferedBytes <= 4 * fuzzMaxMessageBytes + 256, "\(role): holds \(session.bufferedBytes) bytes")
    }
    precondition(closed == (session.state == .closed), "\(role): closeConnection and state disagree")
    if session.state == .open {
        result.localClose = session.close(.goingAway, reason: "fuzz")
        precondition(result.localClose != nil && session.state == .waitingForPeerClose)
        precondition(session.encode(.text, [0x61]) == nil, "\(role): data accepted after a local close")
    }
    result.state = session.state
    return result
}

private func fuzzCheck(_ role: FrameReader.Role, _ outcome: FuzzRun) {
    // What the session wrote, read back by the other side.
    var peer = FrameReader(role: role == .server ? .client : .server, maxMessageBytes: 1 << 20)
    var sent = 0
    for action in outcome.actions {
        switch action {
        case .deliver(.text(let payload)):
            precondition(payload.count <= fuzzMaxMessageBytes, "text message over the limit")
            precondition(String(validating: payload, as: UTF8.self) != nil, "invalid UTF-8 delivered as text")
        case .deliver(.binary(let payload)):
            precondition(payload.count <= fuzzMaxMessageBytes, "binary message over the limit")
        case .deliver(let event):
            preconditionFailure("\(role): control frame \(event) delivered as a message")
        case .send(let frame):
            do {
                try peer.read(frame) { _ in sent += 1 }
            } catch {
                preconditionFailure("\(role): the session sent a frame its peer refuses: \(error)")
            }
        case .receivedPong, .closeConnection:
            break
        }
    }
    if let frame = outcome.localClose {
        do {
            try peer.read(frame) { _ in sent += 1 }
        } catch {
            preconditionFailure("\(role): local close frame refused by the peer: \(error)")
        }
    }
}
