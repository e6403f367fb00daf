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
        var head = "HTTP/1.1 \(status) \(Self.reasonPhrase(status))\r\n"
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        let bodyAllowed = !(100...199).contains(status) && status != 204 && status != 304
        if bodyAllowed { head += "Content-Length: \(body.count)\r\n" }
        if !keepAlive && status != 101 { head += "Connection: close\r\n" }
        head += "\r\n"
        var out = Array(head.utf8)
        if bodyAllowed { out.append(contentsOf: body) }
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
