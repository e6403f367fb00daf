// libFuzzer target: HTTP/1.1 request heads and bodies (Sources/WebSocket/HTTPRequestParser.swift).
//
// Built as part of the WebSocket module (see Tests/scripts/fuzz.sh), so internal API is visible.
// The input is the byte stream a client sends. It is parsed three ways: all at once, in up to four
// pieces cut at points derived from the input, and (for inputs up to 512 bytes) one byte at a time.
// The parser promises that the split does not matter, so the three must agree on the requests
// returned, on whether the stream fails, and on the bytes left over. Every request is then poked
// with the cheap accessors the server uses (path, query parameters, header lookups, keepAlive,
// the WebSocket handshake check) and every error is serialized as the response the server sends.

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
    let bytes = Array(UnsafeBufferPointer(start: data, count: size))
    let hash = fuzzFnv1a(bytes)
    // Half the inputs run with tiny limits so the 431 and 413 paths are reached by short inputs.
    let small = hash & 1 == 1
    let makeParser = {
        small ? HTTPRequestParser(maxHeadBytes: 256, maxHeaderCount: 4, maxBodyBytes: 64) : HTTPRequestParser()
    }

    let whole = fuzzParse(bytes, pieces: [bytes.count], makeParser())

    let pieces = fuzzPieces(size: size, cuts: 3, seed: hash >> 1)
    let split = fuzzParse(bytes, pieces: pieces, makeParser())
    fuzzAgree(whole, split, "split \(pieces)")
    if size <= 512 {
        let drip = fuzzParse(bytes, pieces: Array(repeating: 1, count: size), makeParser())
        fuzzAgree(whole, drip, "one byte at a time")
    }

    for request in whole.requests { fuzzExercise(request) }
    if let error = whole.error {
        let response = HTTPResponse(status: error.status, headers: error.headers, body: Array(error.reason.utf8))
        _ = response.bytes(keepAlive: false)
        precondition((400...599).contains(error.status), "parser error with status \(error.status)")
    }
    return 0
}

private struct FuzzOutcome {
    var requests: [HTTPRequest] = []
    var error: HTTPError?
    var remaining: [UInt8] = []
}

private func fuzzParse(_ bytes: [UInt8], pieces: [Int], _ parser: HTTPRequestParser) -> FuzzOutcome {
    var parser = parser
    var outcome = FuzzOutcome()
    var offset = 0
    feeding: for length in pieces {
        parser.append(Array(bytes[offset..<(offset + length)]))
        offset += length
        do {
            while let request = try parser.next() {
                outcome.requests.append(request)
            }
        } catch {
            outcome.error = error
            break feeding
        }
        // What is held is one unfinished request: a head within its limit, or a head and part of its body.
        precondition(
            parser.bufferedBytes <= parser.maxHeadBytes + parser.maxBodyBytes,
            "parser holds \(parser.bufferedBytes) bytes"
        )
    }
    if outcome.error == nil { outcome.remaining = parser.takeRemaining() }
    return outcome
}

private func fuzzAgree(_ a: FuzzOutcome, _ b: FuzzOutcome, _ how: String) {
    precondition(a.requests == b.requests, "requests differ when fed \(how)")
    precondition((a.error == nil) == (b.error == nil), "error differs when fed \(how): \(String(describing: a.error)) vs \(String(describing: b.error))")
    precondition(a.remaining == b.remaining, "leftover bytes differ when fed \(how)")
}

private func fuzzExercise(_ request: HTTPRequest) {
    precondition(!request.method.isEmpty && request.method.utf8.allSatisfy(isTokenByte), "bad method accepted")
    precondition(request.versionMinor == 0 || request.versionMinor == 1)
    for (name, value) in request.headers {
        precondition(!name.isEmpty && name.utf8.allSatisfy(isTokenByte), "bad header name accepted")
        precondition(!value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }), "CR, LF or NUL in a header value")
        precondition(request.headers[name] != nil)
    }
    let path = request.path
    precondition(request.target.hasPrefix(path))
    _ = request.query
    _ = request.queryParameter("token")
    _ = request.queryParameter("")
    if let query = request.query, let first = query.split(separator: "&").first {
        let name = String(first.prefix { $0 != "=" })
        _ = request.queryParameter(name)
    }
    _ = request.keepAlive
    _ = request.headers["Host"]
    _ = request.headers["content-length"]
    _ = request.headers.values("Sec-WebSocket-Key")
    _ = request.headers.tokens("Connection")
    _ = request.headers.tokens("Sec-WebSocket-Protocol")
    do {
        let accepted = try Handshake.accept(request, policy: HandshakePolicy())
        _ = accepted.response.bytes()
    } catch {
        _ = HTTPResponse(status: error.status, headers: error.headers, body: Array(error.reason.utf8)).bytes()
    }
}
