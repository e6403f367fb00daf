import FoundationEssentials

#if canImport(Glibc)
import Glibc
import LoadSupport
#endif

/// A blocking HTTP/1.1 client for setup only (sign-in, provisioning), run
/// before the loop starts: one request per connection (`Connection: close`),
/// read until EOF, with a receive timeout so it can never hang.
enum SetupHTTP {
    struct Response {
        var status: Int
        var body: [UInt8]
    }

    static func post(host: String, port: Int, path: String, body: [UInt8], bearer: String? = nil,
                     timeoutSeconds: Int = 120) throws -> Response {
        try request("POST", host: host, port: port, path: path, body: body, bearer: bearer, timeoutSeconds: timeoutSeconds)
    }

    /// A GET (`/metrics` between the `notify` scenario's phases).
    static func get(host: String, port: Int, path: String, timeoutSeconds: Int = 10) throws -> Response {
        try request("GET", host: host, port: port, path: path, body: [], bearer: nil, timeoutSeconds: timeoutSeconds)
    }

    private static func request(_ method: String, host: String, port: Int, path: String, body: [UInt8], bearer: String?,
                                timeoutSeconds: Int) throws -> Response {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ToolError("socket: \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        guard inet_pton(AF_INET, host, &address.sin_addr) == 1 else { throw ToolError("setup HTTP needs a numeric IPv4 host") }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else { throw ToolError("connect \(host):\(port): \(String(cString: strerror(errno)))") }
        var head = "\(method) \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nContent-Type: application/json\r\n"
            + "Content-Length: \(body.count)\r\nConnection: close\r\n"
        if let bearer { head += "Authorization: Bearer \(bearer)\r\n" }
        head += "\r\n"
        let request = Array(head.utf8) + body
        var sent = 0
        while sent < request.count {
            let n = request.withUnsafeBytes { write(fd, $0.baseAddress! + sent, $0.count - sent) }
            guard n > 0 else { throw ToolError("write to \(path): \(String(cString: strerror(errno)))") }
            sent += n
        }
        var response: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            if n == 0 { break }
            guard n > 0 else { throw ToolError("read from \(path): \(String(cString: strerror(errno)))") }
            response.append(contentsOf: chunk[..<n])
            if response.count > 256 << 20 { throw ToolError("response from \(path) over 256 MiB") }
        }
        guard let end = endOfHTTPHead(response) else { throw ToolError("no HTTP head in the answer to \(path)") }
        let statusLine = String(decoding: response[..<(response.firstIndex(of: 13) ?? end)], as: UTF8.self)
        let parts = statusLine.split(separator: " ")
        guard parts.count >= 2, let status = Int(parts[1]) else { throw ToolError("bad status line '\(statusLine)'") }
        return Response(status: status, body: Array(response[(end + 4)...]))
    }
}

/// Accounts for a run, from `POST /v1/admin/provision` (or a file `--provision-to` wrote).
struct Provisioned: Codable {
    struct Account: Codable {
        var id: String
        var token: String
        var threadID: String?  // clients: their thread with their coach
        var coachIndex: Int?   // clients: index of their coach in `coaches`
    }
    var coaches: [Account] = []
    var clients: [Account] = []

    func write(to path: String) throws { try writeFile(path, Array(try JSONEncoder().encode(self))) }

    static func read(from path: String) throws -> Provisioned {
        guard let text = readSmallFile(path) else { throw ToolError("cannot read \(path)") }
        return try JSONDecoder().decode(Provisioned.self, from: Data(text.utf8))
    }
}

enum Setup {
    private struct SignIn: Decodable { var access_token: String }
    private struct ProvisionAnswer: Decodable {
        struct Item: Decodable { var id: String; var access_token: String; var coach_id: String?; var thread_id: String? }
        var coaches: [Item]
        var clients: [Item]
    }

    static func signIn(host: String, port: Int, email: String, password: String) throws -> String {
        let body = try JSONSerializationFree.object(["email": email, "password": password])
        let answer = try SetupHTTP.post(host: host, port: port, path: "/v1/auth/signin", body: body)
        guard answer.status == 200 else {
            throw ToolError("admin sign-in: HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
        }
        return try JSONDecoder().decode(SignIn.self, from: Data(answer.body)).access_token
    }

    /// `coaches` coaches with `clientsPerCoach` clients each, in calls of at most 20,000 accounts.
    static func provision(host: String, port: Int, adminToken: String, coaches: Int, clientsPerCoach: Int,
                          password: String) throws -> Provisioned {
        var result = Provisioned()
        let perCall = max(1, 20_000 / (clientsPerCoach + 1))
        var remaining = coaches
        while remaining > 0 {
            let batch = min(perCall, remaining)
            let body = Array("{\"coaches\":\(batch),\"clients_per_coach\":\(clientsPerCoach),\"password\":\"\(password)\"}".utf8)
            let answer = try SetupHTTP.post(host: host, port: port, path: "/v1/admin/provision", body: body, bearer: adminToken)
            guard answer.status == 201 || answer.status == 200 else {
                throw ToolError("provision: HTTP \(answer.status) \(String(decoding: answer.body.prefix(300), as: UTF8.self))")
            }
            let decoded = try JSONDecoder().decode(ProvisionAnswer.self, from: Data(answer.body))
            var coachIndex: [String: Int] = [:]
            for coach in decoded.coaches {
                coachIndex[coach.id] = result.coaches.count
                result.coaches.append(.init(id: coach.id, token: coach.access_token, threadID: nil, coachIndex: nil))
            }
            for client in decoded.clients {
                result.clients.append(.init(id: client.id, token: client.access_token, threadID: client.thread_id,
                                            coachIndex: client.coach_id.flatMap { coachIndex[$0] }))
            }
            remaining -= batch
        }
        return result
    }
}

/// A tiny JSON object encoder for flat string maps (setup bodies).
enum JSONSerializationFree {
    static func object(_ fields: [String: String]) throws -> [UInt8] {
        var out = "{"
        for (i, (key, value)) in fields.sorted(by: { $0.key < $1.key }).enumerated() {
            if i > 0 { out += "," }
            out += "\"\(escape(key))\":\"\(escape(value))\""
        }
        return Array((out + "}").utf8)
    }

    static func escape(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case _ where scalar.value < 0x20: out += "\\u00" + (scalar.value < 16 ? "0" : "") + String(scalar.value, radix: 16)
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
