import Foundation
import Testing
import SpotterPorts
import SpotterPushCrypto
@testable import SpotterPush

// Keys made for these tests only (the SpotterPushCryptoTests fixtures): fixtures, not secrets.
private let p8 = """
    -----BEGIN PRIVATE KEY-----
    MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgrR4G06MvH5RXOYAK
    cNVBlesW95LJ79ins4Ty3xoubIChRANCAATdz5vMLdSBhpBN4hA/FlArGvJjXizr
    MPw4ctYXnmRF+GmewV0I8G5xeGxbYTL07uATXnwnoQhhzSvsu/ZSN0Pd
    -----END PRIVATE KEY-----
    """

@Suite("Push provider settings: keys from files and the environment")
struct SettingsTests {
    let directory: URL

    init() throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("push-settings-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    }

    func file(_ name: String, _ text: String) throws -> String {
        let url = directory.appendingPathComponent(name)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    @Test("nothing configured: no providers, no VAPID public key")
    func nothing() throws {
        let providers = try PushProviderSettings().makeProviders(environment: [:])
        #expect(providers.all.isEmpty)
        #expect(providers.vapidPublicKey == nil)
    }

    @Test("keys from files and from the environment; a path wins over the variable")
    func loads() throws {
        var settings = PushProviderSettings(apnsKeyPath: try file("key.p8", p8), apnsKeyID: "ABC123DEFG", apnsTeamID: "DEF123GHIJ",
                                            webPushSubject: "mailto:ops@spotter.example")
        let keys = try settings.loadKeys(environment: [PushProviderSettings.webPushVAPIDKeyVariable: p8,
                                                       PushProviderSettings.apnsKeyVariable: "garbage"])
        #expect(keys.apns?.keyID == "ABC123DEFG")
        #expect(keys.vapid?.subject == "mailto:ops@spotter.example")
        #expect(keys.fcm == nil)
        settings.apnsKeyPath = nil
        #expect(throws: PushSettingsError.badKey("$SPOTTER_APNS_KEY", .unreadablePrivateKey)) {
            try settings.loadKeys(environment: [PushProviderSettings.apnsKeyVariable: "garbage"])
        }
        let providers = try PushProviderSettings(webPushVAPIDKeyPath: try file("vapid.pem", p8), webPushSubject: "mailto:a@b.example")
            .makeProviders(environment: [:])
        defer { providers.shutdown() }
        #expect(providers.all.map(\.platform) == [.webpush])
        #expect(providers.vapidPublicKey?.count == 87)
    }

    @Test("a missing file, an empty one, a bad key, a missing id or subject: typed errors naming the file, never the key")
    func errors() throws {
        let missing = directory.appendingPathComponent("nope.p8").path
        #expect(throws: PushSettingsError.unreadableFile(missing)) {
            try PushProviderSettings(apnsKeyPath: missing, apnsKeyID: "ABC123DEFG", apnsTeamID: "DEF123GHIJ").loadKeys(environment: [:])
        }
        let empty = try file("empty.p8", "")
        #expect(throws: PushSettingsError.emptyOrNotText(empty)) {
            try PushProviderSettings(apnsKeyPath: empty).loadKeys(environment: [:])
        }
        let key = try file("key.p8", p8)
        #expect(throws: PushSettingsError.missingOption("--apns-key-id", needed: "an APNs key")) {
            try PushProviderSettings(apnsKeyPath: key, apnsTeamID: "DEF123GHIJ").loadKeys(environment: [:])
        }
        #expect(throws: PushSettingsError.badKey(key, .invalidAPNsIdentifier(which: "team id"))) {
            try PushProviderSettings(apnsKeyPath: key, apnsKeyID: "ABC123DEFG", apnsTeamID: "short").loadKeys(environment: [:])
        }
        #expect(throws: PushSettingsError.missingOption("--webpush-subject", needed: "a VAPID key")) {
            try PushProviderSettings(webPushVAPIDKeyPath: key).loadKeys(environment: [:])
        }
        let account = try file("account.json", #"{"type":"service_account","project_id":"p","client_email":"e@x","token_uri":"https://t","private_key":"#
                               + #""-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n"}"#)
        do {
            _ = try PushProviderSettings(fcmServiceAccountPath: account).loadKeys(environment: [:])
            Issue.record("a service account with a bad key was accepted")
        } catch {
            #expect(error.description.hasPrefix("the key in \(account) was refused"))
            #expect(!error.description.contains("AAAA") && !error.description.contains("PRIVATE KEY"))
        }
        #expect(throws: PushSettingsError.badKey(try file("notjson.json", "{"), .invalidServiceAccount(field: "JSON object"))) {
            try PushProviderSettings(fcmServiceAccountPath: directory.appendingPathComponent("notjson.json").path).loadKeys(environment: [:])
        }
        #expect(throws: PushSettingsError.badURL("--apns-url")) {
            try PushProviderSettings(apnsURL: "ftp://x").loadKeys(environment: [:])
        }
        #expect(throws: PushSettingsError.unreadableFile("/nonexistent/ca.pem")) {
            try PushProviderSettings(caFile: "/nonexistent/ca.pem").loadKeys(environment: [:])
        }
    }
}

@Suite("HTTP/2 client without a server")
struct HTTP2ClientTests {
    @Test("libcurl was built with HTTP/2")
    func http2() { #expect(HTTP2Client.supportsHTTP2) }

    @Test("a refused connection is a transport error; a URL that is not http(s) too")
    func refused() throws {
        let client = HTTP2Client()
        defer { client.shutdown() }
        let port = try Listener.unusedPort()
        #expect(throws: HTTPClientError.self) { try StandIns.wait(client, HTTPRequest(url: "https://127.0.0.1:\(port)/x", headers: [], body: [])) }
        #expect(throws: HTTPClientError.self) { try StandIns.wait(client, HTTPRequest(url: "file:///etc/hostname", headers: [], body: [])) }
    }

    @Test("a server that never answers: the request times out; at shutdown, pending requests end with .shutdown")
    func timeoutAndShutdown() throws {
        let listener = try Listener()   // accepts nothing: connections wait in its backlog, TLS never starts
        defer { listener.close() }
        let client = HTTP2Client(options: .init(timeoutSeconds: 30))
        #expect(throws: HTTPClientError.timedOut) {
            try StandIns.wait(client, HTTPRequest(url: "https://127.0.0.1:\(listener.port)/x", headers: [], body: [], timeoutSeconds: 0.5))
        }
        let results = (0..<5).map { _ in Waiter<Result<HTTPResponse, HTTPClientError>>() }
        for waiter in results {
            client.send(HTTPRequest(url: "https://127.0.0.1:\(listener.port)/x", headers: [], body: [1, 2])) { waiter.finish($0) }
        }
        client.shutdown()
        for waiter in results { #expect(waiter.wait(seconds: 1) == .failure(.shutdown)) }
        let after = Waiter<Result<HTTPResponse, HTTPClientError>>()
        client.send(HTTPRequest(url: "https://127.0.0.1:1/x", headers: [], body: [])) { after.finish($0) }
        #expect(after.wait(seconds: 1) == .failure(.shutdown))
        client.shutdown()   // idempotent
    }
}

/// A TCP socket on 127.0.0.1 that listens and never accepts.
final class Listener {
    let fd: Int32
    let port: Int

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        self.fd = fd
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 16) == 0 else {
            _ = Glibc.close(fd)
            throw StandIns.Failed("listen failed")
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    func close() { _ = Glibc.close(fd) }

    /// A port nothing listens on (bound, then closed).
    static func unusedPort() throws -> Int {
        let listener = try Listener()
        listener.close()
        return listener.port
    }
}
