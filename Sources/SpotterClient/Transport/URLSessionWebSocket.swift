#if canImport(Darwin)
import Foundation

/// The Apple platforms' transport: `URLSessionWebSocketTask` (ws:// and wss://, the system's TLS and proxies).
/// Not compiled on Linux, where swift-corelibs-foundation's task needs a libcurl built with WebSockets.
public struct URLSessionWebSocketTransport: WebSocketTransport {
    public init() {}

    public func connect(url: URL, headers: [String: String], subprotocols: [String]) -> any WebSocketConnection {
        URLSessionWebSocketConnection(url: url, headers: headers, subprotocols: subprotocols)
    }
}

final class URLSessionWebSocketConnection: NSObject, WebSocketConnection, URLSessionWebSocketDelegate, @unchecked Sendable {
    let events: AsyncStream<TransportEvent>
    private let continuation: AsyncStream<TransportEvent>.Continuation
    private let lock = NSLock()
    private var finished = false
    private var session: URLSession?
    private var task: URLSessionWebSocketTask?

    init(url: URL, headers: [String: String], subprotocols: [String]) {
        (events, continuation) = AsyncStream.makeStream(of: TransportEvent.self)
        super.init()
        var request = URLRequest(url: url)
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if !subprotocols.isEmpty { request.setValue(subprotocols.joined(separator: ", "), forHTTPHeaderField: "Sec-WebSocket-Protocol") }
        let session = URLSession(configuration: .default, delegate: self, delegateQueue: nil)
        let task = session.webSocketTask(with: request)
        task.maximumMessageSize = 1 << 22
        lock.locked {
            self.session = session
            self.task = task
        }
        task.resume()
        receive(task)
    }

    private func receive(_ task: URLSessionWebSocketTask) {
        task.receive { [weak self] result in
            guard let self else { return }
            switch result {
            case .success(.string(let text)):
                continuation.yield(.text(text))
                receive(task)
            case .success:
                receive(task)  // binary: not part of the protocol
            case .failure:
                break  // the delegate reports the end
            }
        }
    }

    func send(_ text: String) {
        lock.locked { task }?.send(.string(text)) { _ in }
    }

    func close(code: Int, reason: String) {
        let closeCode = URLSessionWebSocketTask.CloseCode(rawValue: code) ?? .normalClosure
        lock.locked { task }?.cancel(with: closeCode, reason: Data(reason.utf8))
        finish(code: code, reason: reason)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask, didOpenWithProtocol protocol: String?) {
        continuation.yield(.opened)
    }

    func urlSession(_ session: URLSession, webSocketTask: URLSessionWebSocketTask,
                    didCloseWith closeCode: URLSessionWebSocketTask.CloseCode, reason: Data?) {
        finish(code: closeCode.rawValue, reason: reason.map { String(decoding: $0, as: UTF8.self) } ?? "")
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: (any Error)?) {
        if let response = task.response as? HTTPURLResponse, response.statusCode != 101 {
            continuation.yield(.refused(status: response.statusCode, body: Data()))
        }
        finish(code: 1006, reason: "")
    }

    private func finish(code: Int, reason: String) {
        let (first, session) = lock.locked {
            let first = !finished
            finished = true
            let session = self.session
            self.session = nil
            return (first, session)
        }
        guard first else { return }
        session?.invalidateAndCancel()  // a URLSession holds its delegate until invalidated
        continuation.yield(.closed(code: code, reason: reason))
        continuation.finish()
    }
}
#endif
