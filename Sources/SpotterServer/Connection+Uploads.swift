import EventLoop
import SpotterProtocol
import WebSocket

extension Connection {
    // MARK: - Uploads

    /// Streams an admitted upload's body to a temporary file, then hands the file to the endpoint. The
    /// request timeout still runs (the body must arrive within it); a failure or a close removes the file.
    func receiveBody(_ request: HTTPRequest, _ admission: UploadAdmission) {
        let sink = UploadSink(loop: server.loop, directory: admission.directory, length: admission.length)
        upload = (request, sink, admission)
        sink.pauseReading = { [tcp] in tcp.stopReading() }
        sink.resumeReading = { [weak self] in if let self, parser.streamedBodyRemaining > 0 { tcp.startReading() } }
        sink.onDone = { [weak self] result in self?.bodyReceived(result) }
        if case .http = phase, requestStartedAt == nil { requestStartedAt = server.loop.nowMilliseconds }
        sink.append(parser.takeStreamedBody())
        if parser.streamedBodyRemaining == 0 { tcp.stopReading() }
    }

    func bodyReceived(_ result: Result<UploadedFile, UploadSinkError>) {
        guard let (request, _, admission) = upload else { return }
        upload = nil
        requestStartedAt = nil
        guard !tcp.isClosed, case .http = phase else {
            admission.reservation.release()
            if case .success(let file) = result { UploadSink.removeLeftover(file.path, loop: server.loop) }
            return
        }
        switch result {
        case .failure(let error):
            admission.reservation.release()
            server.logger.error("could not store an upload", metadata: ["connection": "\(id)", "error": "\(error)"])
            // The folder uploads stream to failed (shared storage away, full): nothing was kept, a retry is right.
            send(.apiError(API.attachmentsUnavailable, .english), keepAlive: false)
            beginClosing()
        case .success(let file):
            pause()
            let loop = server.loop
            admission.received(file) { [weak self] response in
                admission.reservation.release()
                UploadSink.removeLeftover(file.path, loop: loop)
                guard let self, !self.tcp.isClosed, case .http = self.phase else { return }
                self.answer(request, with: response)
                self.resume()
            }
        }
    }

    /// An upload's head decided later (`Server.Route.decideUpload`): nothing is read meanwhile, then the body is
    /// received or the answer sent as if the route had said so at once. A request without a body (an upload
    /// endpoint asks for one) is answered `missing_field` once admitted.
    func decideUpload(_ request: HTTPRequest, _ decide: (@escaping (Server.Route) -> Void) -> Void) {
        pause()
        decide { [weak self] route in
            guard let self, !tcp.isClosed, case .http = phase else {
                if case .receiveBody(let admission) = route { admission.reservation.release() }
                return
            }
            switch route {
            case .receiveBody(let admission) where parser.streamedBodyRemaining > 0:
                awaitingResponse = false
                tcp.startReading()  // before the sink, which may pause it again
                receiveBody(request, admission)
            case .receiveBody(let admission):
                admission.reservation.release()
                answer(request, with: .apiError(APIError(.missingField, field: "body"), .english))
                resume()
            case .respond(let response):
                answer(request, with: response)
                resume()
            case .deferred, .upgrade, .stream, .decideUpload, .later:
                answer(request, with: .apiError(APIError(.badRequest), .english))
                resume()
            }
        }
    }

    /// The connection closed with an upload under way: its file is removed and its bytes released.
    func endUpload() {
        guard let (_, sink, admission) = upload else { return }
        upload = nil
        sink.abort()
        admission.reservation.release()
    }
}
