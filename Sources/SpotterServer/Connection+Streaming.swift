import EventLoop
import WebSocket

extension Connection {
    // MARK: - Streamed responses

    /// Answers `request` with `body`'s head, then its pieces as HTTP chunks, each asked for only once the kernel
    /// has taken the one before (`TCPConnection.whenDrained`). Reading stops meanwhile (a pipelined request
    /// waits); every piece the kernel takes counts as activity, so only a peer that stops reading reaches the
    /// idle timeout. Loop thread only.
    func stream(_ request: HTTPRequest, _ body: any ResponseStream) {
        let keepAlive = request.keepAlive && !server.isDraining
        pause()
        streaming = body
        let head = body.head.chunkedHead(keepAlive: keepAlive)
        server.metrics.bytesOut.increment(by: head.count)
        tcp.send(head)
        sendNextPiece(of: body, keepAlive: keepAlive)
    }

    private func sendNextPiece(of body: any ResponseStream, keepAlive: Bool) {
        tcp.whenDrained { [weak self] error in
            guard let self, streaming === body else { return }
            guard error == nil, case .http = phase else { return endStream() }
            lastHeard = server.loop.nowMilliseconds  // the peer took everything so far
            body.next { [weak self] result in
                guard let self, streaming === body else { return }
                guard !tcp.isClosed, case .http = phase else { return endStream() }
                switch result {
                case .success(let piece?):
                    let chunk = HTTPChunked.chunk(piece)
                    server.metrics.bytesOut.increment(by: chunk.count)
                    tcp.send(chunk)
                    sendNextPiece(of: body, keepAlive: keepAlive)
                case .success(nil):
                    tcp.send(HTTPChunked.last)
                    endStream()
                    if keepAlive { resume() } else { beginClosing() }
                case .failure(let error):
                    server.logger.error("streamed response failed; cutting the connection",
                                        metadata: ["connection": "\(id)", "error": "\(error)"])
                    endStream()
                    tcp.close()  // no last chunk: the client sees the body is incomplete
                }
            }
        }
    }

    /// The stream is over (complete, failed, or the connection closing): it releases what it holds, once.
    func endStream() {
        guard let body = streaming else { return }
        streaming = nil
        body.finish()
    }
}
