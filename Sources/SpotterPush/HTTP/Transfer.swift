import CCurl

/// One request on the client's thread: its easy handle, header list and the answer as it arrives. Used only on
/// that thread; libcurl's callbacks find it through the `Unmanaged` pointer in WRITEDATA / HEADERDATA, which the
/// client's `active` list keeps alive until `finish` or `fail`.
final class Transfer: @unchecked Sendable {
    let easy: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let completion: HTTP2Client.Completion
    private var status = 0
    private var headers: [String: String] = [:]
    private var body: [UInt8] = []
    /// libcurl's detailed error text (CURLOPT_ERRORBUFFER wants a stable buffer for the transfer's life).
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var done = false

    private let maxBodyBytes: Int

    private init(easy: UnsafeMutableRawPointer, maxBodyBytes: Int, completion: @escaping HTTP2Client.Completion) {
        self.easy = easy
        self.maxBodyBytes = maxBodyBytes
        self.completion = completion
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    }

    deinit {
        errorBuffer.deallocate()
    }

    static func make(_ item: HTTP2Client.Queued, options: HTTP2Client.Options) -> Result<Transfer, HTTPClientError> {
        guard let easy = curl_easy_init() else { return .failure(.transport(code: -1, message: "curl_easy_init failed")) }
        let transfer = Transfer(easy: easy, maxBodyBytes: options.maxResponseBytes, completion: item.completion)
        let request = item.request
        let context = Unmanaged.passUnretained(transfer).toOpaque()
        var ok = true
        func check(_ code: CURLcode) { if code != CURLE_OK { ok = false } }
        check(spotter_curl_easy_setopt_string(easy, CURLOPT_URL, request.url))
        check(spotter_curl_easy_setopt_string(easy, CURLOPT_PROTOCOLS_STR, "http,https"))
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS)))
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_PIPEWAIT, 1))
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_NOSIGNAL, 1))
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_TCP_KEEPALIVE, 1))
        let timeout = request.timeoutSeconds ?? options.timeoutSeconds
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_TIMEOUT_MS, Int(max(1, timeout * 1000))))
        check(spotter_curl_easy_setopt_long(easy, CURLOPT_CONNECTTIMEOUT_MS,
                                            Int(max(1, min(timeout, options.connectTimeoutSeconds) * 1000))))
        if let caFile = options.caFile { check(spotter_curl_easy_setopt_string(easy, CURLOPT_CAINFO, caFile)) }
        check(spotter_curl_easy_setopt_string(easy, CURLOPT_CUSTOMREQUEST, request.method))
        if request.method != "GET" {
            check(spotter_curl_easy_setopt_long(easy, CURLOPT_POST, 1))
            check(spotter_curl_easy_setopt_off_t(easy, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(request.body.count)))
            // COPYPOSTFIELDS copies the bytes (the size set first), so nothing here must outlive the call.
            request.body.withUnsafeBytes { bytes in
                let base = bytes.baseAddress ?? UnsafeRawPointer(bitPattern: 1)!   // an empty body: any pointer, 0 bytes
                check(spotter_curl_easy_setopt_pointer(easy, CURLOPT_COPYPOSTFIELDS, base))
            }
        }
        // curl adds `Expect: 100-continue` to large HTTP/1.1 bodies and a content type to POSTs: both unwanted.
        var list: UnsafeMutablePointer<curl_slist>? = curl_slist_append(nil, "Expect:")
        if request.header("content-type") == nil { list = curl_slist_append(list, "Content-Type:") }
        for header in request.headers where !header.name.isEmpty {
            let clean = (header.name + ": " + header.value).filter { $0 != "\r" && $0 != "\n" }
            list = curl_slist_append(list, clean)
        }
        transfer.headerList = list
        check(spotter_curl_easy_setopt_pointer(easy, CURLOPT_HTTPHEADER, list))
        check(spotter_curl_easy_setopt_callback(easy, CURLOPT_WRITEFUNCTION, writeCallback))
        check(spotter_curl_easy_setopt_pointer(easy, CURLOPT_WRITEDATA, context))
        check(spotter_curl_easy_setopt_callback(easy, CURLOPT_HEADERFUNCTION, headerCallback))
        check(spotter_curl_easy_setopt_pointer(easy, CURLOPT_HEADERDATA, context))
        check(spotter_curl_easy_setopt_pointer(easy, CURLOPT_ERRORBUFFER, transfer.errorBuffer))
        guard ok else {
            transfer.release()
            return .failure(.transport(code: Int(CURLE_BAD_FUNCTION_ARGUMENT.rawValue), message: "the request could not be set up"))
        }
        return .success(transfer)
    }

    /// libcurl finished the transfer with `code`.
    func finish(_ code: CURLcode) {
        if code == CURLE_OK {
            var version = 0
            spotter_curl_easy_getinfo_long(easy, CURLINFO_HTTP_VERSION, &version)
            var status = 0
            spotter_curl_easy_getinfo_long(easy, CURLINFO_RESPONSE_CODE, &status)
            let response = HTTPResponse(status: status, headers: headers, body: body, version: Self.version(version))
            release()
            complete(.success(response))
        } else if code == CURLE_OPERATION_TIMEDOUT {
            fail(.timedOut)
        } else {
            let detail = String(cString: errorBuffer)
            let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
            fail(.transport(code: Int(code.rawValue), message: message))
        }
    }

    func fail(_ error: HTTPClientError) {
        release()
        complete(.failure(error))
    }

    private func complete(_ result: Result<HTTPResponse, HTTPClientError>) {
        guard !done else { return }
        done = true
        completion(result)
    }

    private func release() {
        guard !done else { return }
        curl_easy_cleanup(easy)
        curl_slist_free_all(headerList)
        headerList = nil
    }

    static func version(_ curlVersion: Int) -> HTTPVersion {
        switch curlVersion {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_1_1): .http1_1
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case 30: .http3   // CURL_HTTP_VERSION_3
        default: .unknown
        }
    }

    // MARK: Callbacks (C function pointers: no captures)

    fileprivate func received(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard body.count + bytes.count <= maxBodyBytes else { return false }
        body += bytes
        return true
    }

    /// One header line: a status line starts a new set (an interim 100 answer's headers are dropped).
    fileprivate func receivedHeader(_ line: UnsafeBufferPointer<UInt8>) {
        let text = String(decoding: line, as: UTF8.self)
        if text.hasPrefix("HTTP/") {
            headers = [:]
            return
        }
        guard let colon = text.firstIndex(of: ":") else { return }
        let name = text[..<colon].trimmingSpaces.lowercased()
        let value = text[text.index(after: colon)...].trimmingSpaces
        guard !name.isEmpty else { return }
        headers[name] = headers[name].map { $0 + ", " + value } ?? value
    }
}

private let writeCallback: spotter_curl_data_callback = { data, size, count, context in
    let length = size * count
    guard let context, let data else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    let bytes = UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self)
    return transfer.received(bytes) ? length : 0   // 0: too large, libcurl ends the transfer with an error
}

private let headerCallback: spotter_curl_data_callback = { data, size, count, context in
    let length = size * count
    guard let context, let data else { return length }
    let transfer = Unmanaged<Transfer>.fromOpaque(context).takeUnretainedValue()
    transfer.receivedHeader(UnsafeRawBufferPointer(start: data, count: length).bindMemory(to: UInt8.self))
    return length
}
