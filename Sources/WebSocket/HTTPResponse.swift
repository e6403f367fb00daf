/// An HTTP/1.1 response, serialized by `bytes`.
public struct HTTPResponse: Sendable {
    public var status: Int
    public var headers: [(name: String, value: String)]
    public var body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)] = [], body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A response with a body and its `Content-Type`.
    public init(status: Int, contentType: String, body: some StringProtocol, headers: [(name: String, value: String)] = []) {
        self.init(status: status, headers: [("Content-Type", contentType)] + headers, body: Array(body.utf8))
    }

    /// Serializes the response. `Content-Length` is added unless the status
    /// forbids a body (1xx, 204, 304); `keepAlive: false` adds `Connection: close`.
    public func bytes(keepAlive: Bool = true) -> [UInt8] {
        // Appended as bytes into one array: string interpolation per line cost a connect's 101 12,000 instructions.
        var out: [UInt8] = []
        out.reserveCapacity(128 + headers.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 4 } + body.count)
        out += "HTTP/1.1 ".utf8
        out += String(status).utf8
        out.append(UInt8(ascii: " "))
        out += Self.reasonPhrase(status).utf8
        out += "\r\n".utf8
        for (name, value) in headers {
            out += name.utf8
            out += ": ".utf8
            out += value.utf8
            out += "\r\n".utf8
        }
        let bodyAllowed = !(100...199).contains(status) && status != 204 && status != 304
        if bodyAllowed {
            out += "Content-Length: ".utf8
            out += String(body.count).utf8
            out += "\r\n".utf8
        }
        if !keepAlive && status != 101 { out += "Connection: close\r\n".utf8 }
        out += "\r\n".utf8
        if bodyAllowed { out += body }
        return out
    }

    public static func reasonPhrase(_ status: Int) -> String {
        switch status {
        case 101: return "Switching Protocols"
        case 200: return "OK"
        case 201: return "Created"
        case 202: return "Accepted"
        case 204: return "No Content"
        case 400: return "Bad Request"
        case 401: return "Unauthorized"
        case 403: return "Forbidden"
        case 404: return "Not Found"
        case 405: return "Method Not Allowed"
        case 409: return "Conflict"
        case 410: return "Gone"
        case 408: return "Request Timeout"
        case 413: return "Content Too Large"
        case 415: return "Unsupported Media Type"
        case 422: return "Unprocessable Content"
        case 426: return "Upgrade Required"
        case 429: return "Too Many Requests"
        case 431: return "Request Header Fields Too Large"
        case 500: return "Internal Server Error"
        case 501: return "Not Implemented"
        case 503: return "Service Unavailable"
        case 505: return "HTTP Version Not Supported"
        default: return "Status \(status)"
        }
    }
}
