import Foundation
import Testing
@testable import SpotterPushCrypto

/// Runs Tests/scripts/push-crypto-check.py: independent implementations from PyPI (http_ece, pywebpush, py_vapid,
/// PyJWT over `cryptography`) read what this module wrote, and write what it must read.
///
/// The packages are found on the interpreter's path, in `.build/push-python` (where `.ci/run` installs them with
/// `pip install --target`), or in `SPOTTER_PUSH_PYTHONPATH`; `SPOTTER_PUSH_PYTHON` names another interpreter.
/// Without them the tests are skipped with a message saying how to install them — except under `CI=true`, where
/// they run and fail.
enum PythonChecker {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()
    static let script = root.appendingPathComponent("Tests/scripts/push-crypto-check.py").path

    static let isRequired = ProcessInfo.processInfo.environment["CI"] == "true"

    /// Whether to run the interop tests: the packages are there, or CI requires them (and the tests then fail).
    static let shouldRun: Bool = {
        if let probe = try? run("probe", input: Data()), probe.status == 0 { return true }
        if isRequired { return true }
        print("""
            ⚠️  SKIPPED: push crypto interop tests (Tests/scripts/push-crypto-check.py): Python packages missing.
                Install them: python3 -m pip install --target .build/push-python http_ece pywebpush PyJWT cryptography
                (.ci/run does; under CI=true these tests fail instead of skipping.)
            """)
        return false
    }()

    struct Outcome {
        var status: Int32
        var stdout: Data
        var stderr: String
    }

    /// The script's answer to `mode` with `input` on stdin.
    static func run(_ mode: String, input: Data) throws -> Outcome {
        let environment = ProcessInfo.processInfo.environment
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [environment["SPOTTER_PUSH_PYTHON"] ?? "python3", script, mode]
        var paths = [root.appendingPathComponent(".build/push-python").path]
        if let extra = environment["SPOTTER_PUSH_PYTHONPATH"] { paths.insert(extra, at: 0) }
        if let existing = environment["PYTHONPATH"] { paths.append(existing) }
        var childEnvironment = environment
        childEnvironment["PYTHONPATH"] = paths.joined(separator: ":")
        process.environment = childEnvironment
        let inputFile = FileManager.default.temporaryDirectory.appendingPathComponent("push-check-\(UUID().uuidString).json")
        try input.write(to: inputFile)
        defer { try? FileManager.default.removeItem(at: inputFile) }
        process.standardInput = try FileHandle(forReadingFrom: inputFile)
        let stdout = Pipe(), stderr = Pipe()
        process.standardOutput = stdout
        process.standardError = stderr
        try process.run()
        // The answers are small; stderr is read after stdout closes (the script writes it only on failure).
        let output = stdout.fileHandleForReading.readDataToEndOfFile()
        let errors = stderr.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Outcome(status: process.terminationStatus, stdout: output, stderr: String(decoding: errors, as: UTF8.self))
    }

    /// The script's JSON answer to `mode`; records an issue with its stderr when it fails.
    static func ask(_ mode: String, _ request: [String: Any]) throws -> [String: Any] {
        let outcome = try run(mode, input: JSONSerialization.data(withJSONObject: request))
        guard outcome.status == 0, let answer = try JSONSerialization.jsonObject(with: outcome.stdout) as? [String: Any] else {
            Issue.record("push-crypto-check.py \(mode) exited \(outcome.status): \(outcome.stderr)")
            throw CheckFailed()
        }
        return answer
    }

    struct CheckFailed: Error {}
}

@Suite("Push crypto against PyPI's implementations", .enabled(if: PythonChecker.shouldRun))
struct PushCryptoInteropTests {
    let subscriber = try! P256PrivateKey(pem: Fixtures.subscriber)
    let authSecret: [UInt8] = Array(101...116)
    let now = Int64(Date().timeIntervalSince1970)   // PyJWT checks iat against its own clock

    struct Case {
        var fields: [String: Any]
        var valid: Bool
    }

    @Test("http_ece decrypts Swift's Web Push messages; PyJWT verifies Swift's VAPID, APNs and FCM tokens; forgeries fail")
    func pythonReadsSwift() throws {
        var cases: [String: Case] = [:]
        let keys = try WebPushSubscriptionKeys(p256dh: subscriber.publicKey.uncompressed, authSecret: authSecret)
        let plaintexts: [String: [UInt8]] = [
            "empty": [], "short": Array("hello".utf8),
            "arabic": Array(#"{"title":"رسالة جديدة من سارة","body":"موعد الجلسة غدًا"}"#.utf8),
            "largest": (0..<WebPushEncryption.maxPlaintextBytes).map { UInt8(truncatingIfNeeded: $0 &* 7) },
        ]
        for (name, plaintext) in plaintexts {
            let body = try WebPushEncryption.encrypt(plaintext, to: keys)
            let fields: [String: Any] = ["kind": "webpush", "body": b64(body), "ua_private_pem": Fixtures.subscriber,
                                         "auth": b64(authSecret), "plaintext": b64(plaintext)]
            cases["webpush \(name)"] = Case(fields: fields, valid: true)
            var tampered = body
            tampered[body.count - 1] ^= 0x40   // the tag's last byte
            cases["webpush \(name), a ciphertext byte changed"] = Case(fields: fields.merging(["body": b64(tampered)]) { $1 }, valid: false)
        }
        cases["webpush, the wrong auth secret"] = Case(
            fields: ["kind": "webpush", "body": b64(try WebPushEncryption.encrypt([1], to: keys)), "ua_private_pem": Fixtures.subscriber,
                     "auth": b64(Array(1...16)), "plaintext": b64([1])], valid: false)

        let vapid = try VAPIDKey(pem: Fixtures.vapid, subject: "mailto:ops@spotter.example")
        for endpoint in ["https://push.example.net:8443/wpush/v2/abc", "https://fcm.googleapis.com/fcm/send/x:y",
                         "http://127.0.0.1:9123/push/1"] {
            let base: [String: Any] = ["kind": "vapid", "endpoint": endpoint, "subject": vapid.subject,
                                       "vapid_private_pem": Fixtures.vapid, "now": now]
            let header = try vapid.authorization(endpoint: endpoint, now: now)
            cases["vapid \(endpoint)"] = Case(fields: base.merging(["authorization": header]) { $1 }, valid: true)
            let elsewhere = try vapid.authorization(endpoint: "https://elsewhere.example/x", now: now)
            cases["vapid \(endpoint), aud of another origin"] = Case(fields: base.merging(["authorization": elsewhere]) { $1 }, valid: false)
        }
        let vapidToken = vapid.token(audience: "https://push.example.net", expiresAt: now + 60)
        let forgedVAPID = replacingClaims(of: vapidToken, with: #"{"aud":"https://push.example.net","exp":\#(now + 600),"sub":"mailto:ops@spotter.example"}"#)
        cases["vapid, claims changed after signing"] = Case(
            fields: ["kind": "vapid", "endpoint": "https://push.example.net/x", "subject": vapid.subject, "vapid_private_pem": Fixtures.vapid,
                     "now": now, "authorization": "vapid t=\(forgedVAPID), k=\(vapid.publicKeyBase64URL)"], valid: false)

        let apns = try APNsSigningKey(p8: Fixtures.apnsP8, keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        let apnsBase: [String: Any] = ["kind": "apns", "public_pem": Fixtures.apnsPublic, "key_id": "ABC123DEFG",
                                       "team_id": "DEF123GHIJ", "iat": now]
        var tokens = APNsProviderToken(signingKey: apns)
        cases["apns provider token"] = Case(fields: apnsBase.merging(["jwt": tokens.token(now: now)]) { $1 }, valid: true)
        let impostor = try APNsSigningKey(privateKey: .generate(), keyID: "ABC123DEFG", teamID: "DEF123GHIJ")
        cases["apns, signed by another key"] = Case(fields: apnsBase.merging(["jwt": impostor.token(issuedAt: now)]) { $1 }, valid: false)

        let account = try FCMServiceAccount(json: serviceAccountJSON())
        let fcmBase: [String: Any] = ["kind": "fcm", "public_pem": Fixtures.serviceAccountPublic, "client_email": account.clientEmail,
                                      "token_uri": account.tokenURI, "iat": now]
        let assertion = account.assertion(now: now)
        cases["fcm assertion and grant body"] = Case(
            fields: fcmBase.merging(["jwt": assertion, "form_body": account.grantRequestBody(now: now)]) { $1 }, valid: true)
        let forgedAssertion = replacingClaims(of: assertion, with: #"{"iss":"x","scope":"y","aud":"z","iat":1,"exp":2}"#)
        cases["fcm, claims changed after signing"] = Case(
            fields: fcmBase.merging(["jwt": forgedAssertion, "form_body": "grant_type=x&assertion=" + forgedAssertion]) { $1 }, valid: false)

        let request = cases.map { name, item in item.fields.merging(["name": name]) { $1 } }
        let answer = try PythonChecker.ask("check", ["cases": request])
        let results = try #require(answer["results"] as? [[String: Any]])
        #expect(results.count == cases.count)
        for result in results {
            let name = result["name"] as? String ?? "?"
            let expected = try #require(cases[name]).valid
            #expect(result["valid"] as? Bool == expected, "\(name): \(result["detail"] ?? "")")
        }
    }

    @Test("Swift decrypts http_ece's and pywebpush's messages (one record and many) and verifies py_vapid's and PyJWT's ES256")
    func swiftReadsPython() throws {
        let plaintexts = [Array("hello from Python".utf8), Array("مرحبا".utf8), [UInt8](repeating: 0x2A, count: 3000)]
        let endpoint = "https://push.example.net:8443/wpush/v2/abc"
        let answer = try PythonChecker.ask("make", [
            "ua_public": subscriber.publicKey.base64URL, "auth": b64(authSecret), "plaintexts": plaintexts.map { b64($0) },
            "endpoint": endpoint, "subject": "mailto:python@example.net", "now": now,
        ])
        let bodies = (answer["http_ece"] as? [[String: Any]] ?? []) + (answer["pywebpush"] as? [[String: Any]] ?? [])
        #expect(bodies.count == plaintexts.count * 3)
        for message in bodies {
            let body = b64(try #require(message["body"] as? String))
            let expected = b64(try #require(message["plaintext"] as? String))
            #expect(try WebPushEncryption.decrypt(body, receiverKey: subscriber, authSecret: authSecret) == expected,
                    "rs \(message["rs"] ?? "4096 (pywebpush)")")
        }

        let vapid = try #require(answer["vapid"] as? [String: Any])
        let header = try #require(vapid["authorization"] as? String)
        let (claims, _) = try VAPIDAuthorization.verify(header, endpoint: endpoint, now: now)
        #expect(claims == VAPIDClaims(aud: "https://push.example.net:8443", exp: now + 3600, sub: "mailto:python@example.net"))

        let es256 = try #require(answer["es256"] as? [String: Any])
        let key = try P256PublicKey(uncompressed: b64(try #require(es256["public"] as? String)))
        let token = try #require(es256["jwt"] as? String)
        let payload = try CompactJWS.verify(token, algorithm: "ES256") { key.isValidES256Signature($0, for: $1) }
        #expect(String(decoding: payload, as: UTF8.self).contains(#""iss":"python""#))
        #expect(throws: PushCryptoError.badSignature) {
            try CompactJWS.verify(token, algorithm: "ES256") { P256PrivateKey.generate().publicKey.isValidES256Signature($0, for: $1) }
        }
    }
}
