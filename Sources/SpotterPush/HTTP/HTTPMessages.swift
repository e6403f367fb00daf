/// One request to a push service: what a provider's pure encoding produces and `HTTP2Client` sends.
public struct HTTPRequest: Sendable, Equatable {
    public var method: String
    public var url: String
    /// In order; names as the provider spells them (HTTP/2 sends them lower-cased).
    public var headers: [HTTPHeader]
    public var body: [UInt8]
    /// The whole request, connection included; nil for the client's default.
    public var timeoutSeconds: Double?

    public init(method: String = "POST", url: String, headers: [HTTPHeader], body: [UInt8], timeoutSeconds: Double? = nil) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.timeoutSeconds = timeoutSeconds
    }

    /// The value of the first header named `name` (case-insensitive).
    public func header(_ name: String) -> String? {
        let lower = name.lowercased()
        return headers.first { $0.name.lowercased() == lower }?.value
    }
}

public struct HTTPHeader: Sendable, Equatable, CustomStringConvertible {
    public var name: String
    public var value: String

    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }

    /// `authorization` values are secrets (bearer tokens, VAPID JWTs): left out.
    public var description: String {
        name.lowercased() == "authorization" ? "\(name): redacted" : "\(name): \(value)"
    }
}

/// A push service's answer.
public struct HTTPResponse: Sendable, Equatable {
    public var status: Int
    /// Names lower-cased; a repeated header's values joined with ", ".
    public var headers: [String: String]
    public var body: [UInt8]
    /// The protocol the answer came over.
    public var version: HTTPVersion

    public init(status: Int, headers: [String: String] = [:], body: [UInt8] = [], version: HTTPVersion = .http2) {
        self.status = status
        self.headers = headers
        self.body = body
        self.version = version
    }

    /// `Retry-After` in seconds, when it is a number of seconds (push services do not send dates), capped at a day.
    public var retryAfterSeconds: Int? {
        guard let text = headers["retry-after"]?.trimmingSpaces, let seconds = Int(text), seconds >= 0 else { return nil }
        return min(seconds, 86_400)
    }
}

public enum HTTPVersion: String, Sendable, Equatable {
    case http1_0 = "HTTP/1.0", http1_1 = "HTTP/1.1", http2 = "HTTP/2", http3 = "HTTP/3", unknown
}

/// Why a request got no answer.
public enum HTTPClientError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The client was shut down before the answer came (or the request came after).
    case shutdown
    /// No answer within the request's timeout.
    case timedOut
    /// libcurl's error: connection refused or reset, TLS failure, a malformed URL, … (`code` is its CURLcode).
    case transport(code: Int, message: String)

    public var description: String {
        switch self {
        case .shutdown: "the HTTP client was shut down"
        case .timedOut: "no answer in time"
        case .transport(let code, let message): "transport error \(code): \(message)"
        }
    }
}

extension StringProtocol {
    /// Without leading and trailing spaces, tabs, CR and LF (by scalar: "\r\n" is one `Character`).
    var trimmingSpaces: String {
        let blank: (Unicode.Scalar) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" }
        var scalars = Substring(self).unicodeScalars[...]
        while let first = scalars.first, blank(first) { scalars = scalars.dropFirst() }
        while let last = scalars.last, blank(last) { scalars = scalars.dropLast() }
        return String(String.UnicodeScalarView(scalars))
    }
}
