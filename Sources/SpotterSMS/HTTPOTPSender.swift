import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking  // URLSession on Linux (libcurl): HTTPS to the gateway
#endif
import SpotterServer

/// Sends one-time codes through a gateway's HTTP API (an SMS gateway for sign-in codes, a mail gateway for
/// codes confirming a new email address): one `POST` of JSON to the configured URL,
///
///     {"to":"+966551234567","code":"482913","text":"Your Spotter code is 482913 …"}
///
/// with `Authorization: Bearer <token>` when a token is set. Any 2xx answer is a success; anything else (a
/// refusal, a timeout, no connection) throws, so the code request answers `internal_error` and no resend wait
/// starts. Called on a worker thread: it blocks until the gateway answers or the timeout passes. Nothing about
/// the phone or the code is logged.
///
/// This is the only module that needs Foundation's networking (libcurl); the server itself does not link it.
public struct HTTPOTPSender: OTPSender {
    public let url: URL
    let token: String?
    let timeoutSeconds: Double

    public init(url: URL, token: String?, timeoutSeconds: Double = 10) {
        self.url = url
        self.token = token
        self.timeoutSeconds = timeoutSeconds
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case status(Int)
        case transport(String)

        public var description: String {
            switch self {
            case .status(let status): return "the gateway answered \(status)"
            case .transport(let reason): return "the gateway could not be reached: \(reason)"
            }
        }
    }

    /// The message people read: English, then Arabic (the request does not say which the user reads).
    public static func text(code: String) -> String {
        "Your Spotter code is \(code). It expires in 5 minutes. رمز Spotter الخاص بك هو \(code)، وينتهي خلال 5 دقائق."
    }

    public func send(code: String, to phone: String) throws {
        try post(["to": phone, "code": code, "text": HTTPOTPSender.text(code: code)])
    }

    /// POSTs `body` as JSON (sorted keys) and waits for a 2xx.
    func post(_ body: [String: String]) throws {
        var request = URLRequest(url: url, timeoutInterval: timeoutSeconds)
        request.httpMethod = "POST"
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        if let token { request.setValue("Bearer \(token)", forHTTPHeaderField: "Authorization") }
        request.httpBody = try JSONSerialization.data(withJSONObject: body, options: [.sortedKeys])

        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        let task = URLSession.shared.dataTask(with: request) { _, response, error in
            if let error {
                outcome.set(.failure(.transport(error.localizedDescription)))
            } else {
                let status = (response as? HTTPURLResponse)?.statusCode ?? 0
                outcome.set((200..<300).contains(status) ? .success(()) : .failure(.status(status)))
            }
            done.signal()
        }
        task.resume()
        // URLSession applies the timeout; this wait only guards against a task that never completes.
        if done.wait(timeout: .now() + timeoutSeconds + 5) == .timedOut {
            task.cancel()
            throw Failure.transport("no answer within \(Int(timeoutSeconds)) s")
        }
        try outcome.get().get()
    }

    /// The task's result, handed from URLSession's queue to the waiting thread.
    private final class Outcome: @unchecked Sendable {
        private let lock = NSLock()
        private var result: Result<Void, Failure>?
        func set(_ value: Result<Void, Failure>) { lock.withLock { result = value } }
        func get() -> Result<Void, Failure> { lock.withLock { result ?? .failure(.transport("no result")) } }
    }
}

/// Notification texts (a session reminder) through the same gateway: one `POST` of
///
///     {"id":"pos:42:<user id>","kind":"session_reminder","subject":"Session starting soon","text":"…","to":"+9665…"}
///
/// `id` is the same each time the same text is sent again (after a crash): a gateway drops what it has seen. `to` is
/// a phone number for the SMS gateway, an address for the mail gateway. A 4xx answer other than 408 and 429 is a
/// refusal for good (`NotificationTextFailure.refused`, not retried); any other failure throws to be retried.
extension HTTPOTPSender: NotificationTextSender {
    public func send(_ text: NotificationText) throws {
        do {
            try post(["id": text.id, "kind": text.kind, "subject": text.subject, "text": text.text, "to": text.to])
        } catch Failure.status(let status) where (400..<500).contains(status) && status != 408 && status != 429 {
            throw NotificationTextFailure.refused(status: status)
        }
    }
}
