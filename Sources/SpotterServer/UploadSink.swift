import EventLoop
import WebSocket

#if canImport(Glibc)
import Glibc
#endif

/// An upload's body, whole, in a temporary file (`UploadSink`): what the endpoint's handler gets.
struct UploadedFile: Sendable {
    /// The temporary file. The handler moves it into place or leaves it; the connection removes whatever is
    /// left once the answer is given.
    let path: String
    let bytes: Int
    /// The first bytes (up to 16): the file's type is read from them.
    let prefix: [UInt8]
}

/// What an upload endpoint decided from the request head alone, before any body byte was read: the caller
/// is signed in and may upload there, and `length` bytes are reserved under `maxUploadBytesInFlight`.
struct UploadAdmission {
    let length: Int
    /// Where the body is streamed to (under the data directory).
    let directory: String
    let reservation: UploadReservation
    /// Runs on the loop once the whole body is on disk; answers through the callback.
    let received: (UploadedFile, @escaping (HTTPResponse) -> Void) -> Void
}

/// Bytes of uploads being received, held against `ServerConfig.maxUploadBytesInFlight` from the head's
/// admission until the upload is answered or fails. `release` is idempotent. Loop thread only.
final class UploadReservation {
    private var bytes: Int
    private let onRelease: (Int) -> Void

    init(bytes: Int, onRelease: @escaping (Int) -> Void) {
        self.bytes = bytes
        self.onRelease = onRelease
    }

    func release() {
        guard bytes > 0 else { return }
        let released = bytes
        bytes = 0
        onRelease(released)
    }

    deinit { release() }
}

/// Streams one upload's body to a temporary file, never holding it whole. Loop thread only; every file
/// operation (open, write, close, unlink) runs on libuv's worker pool through `loop.runBlocking`, one at a
/// time and in order, so the loop never waits on the disk.
///
/// Memory: at most `highWaterBytes` wait for the disk (plus one socket read). Past that the sink asks its
/// owner to stop reading the socket (`pauseReading`) and to resume once the write in flight is done; the
/// kernel's receive window then holds the sender back.
final class UploadSink {
    static let highWaterBytes = 256 * 1024

    private let loop: Loop
    let path: String
    let length: Int
    private(set) var received = 0
    private var prefix: [UInt8] = []
    private var pending: [UInt8] = []
    /// The open file, once the open job is back (-1 until then and after it is closed).
    private var descriptor: Int32 = -1
    /// A job (open, write or close) is on the pool.
    private var busy = true
    private var paused = false
    private var finished = false
    private var aborted = false

    var pauseReading: () -> Void = {}
    var resumeReading: () -> Void = {}
    /// Once, on the loop: the whole body is on disk and the file closed, or the disk failed (the file removed).
    var onDone: (Result<UploadedFile, UploadSinkError>) -> Void = { _ in }

    init(loop: Loop, directory: String, length: Int) {
        self.loop = loop
        self.length = length
        path = directory + "/upload-\(getpid())-\(UInt64.random(in: 0...UInt64.max)).partial"
        let path = self.path
        loop.runBlocking({ () -> Result<Int32, UploadSinkError> in
            // The folder and its parent (the attachments' folder, made on the first upload).
            if mkdir(directory, 0o750) != 0 && errno == ENOENT, let slash = directory.lastIndex(of: "/") {
                _ = mkdir(String(directory[..<slash]), 0o750)
                _ = mkdir(directory, 0o750)
            }
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
            return fd >= 0 ? .success(fd) : .failure(.io("open", errno))
        }, then: { [self] result in
            busy = false
            switch result {
            case .success(let fd):
                descriptor = fd
                if aborted { removeFile() } else { pump() }
            case .failure(let error):
                fail(error)
            }
        })
    }

    /// Body bytes from the socket, in order; never more than `length` in all (the parser hands over no more).
    func append(_ bytes: [UInt8]) {
        guard !finished, !aborted, !bytes.isEmpty else { return }
        received += bytes.count
        if prefix.count < 16 { prefix += bytes.prefix(16 - prefix.count) }
        pending += bytes
        if pending.count >= Self.highWaterBytes, !paused {
            paused = true
            pauseReading()
        }
        pump()
    }

    /// The connection went away (or timed out) before the body was all here: the file is removed as soon as
    /// the job in flight, if any, is back.
    func abort() {
        guard !finished, !aborted else { return }
        aborted = true
        pending = []
        if !busy { removeFile() }
    }

    /// Starts the next job: a write of what is pending, or the close once everything is written.
    private func pump() {
        guard !busy, !finished, !aborted, descriptor >= 0 else { return }
        if !pending.isEmpty {
            busy = true
            let (fd, chunk) = (descriptor, pending)
            pending = []
            loop.runBlocking({ Self.writeAll(fd, chunk) }, then: { [self] error in
                busy = false
                if aborted { return removeFile() }
                if let error { return fail(error) }
                if paused, pending.count < Self.highWaterBytes {
                    paused = false
                    resumeReading()
                }
                pump()
            })
        } else if received == length {
            busy = true
            let fd = descriptor
            descriptor = -1
            loop.runBlocking({ close(fd) == 0 ? nil : UploadSinkError.io("close", errno) }, then: { [self] error in
                busy = false
                if aborted { return removeFile() }
                if let error { return fail(error) }
                finished = true
                onDone(.success(UploadedFile(path: path, bytes: received, prefix: prefix)))
            })
        }
    }

    private func fail(_ error: UploadSinkError) {
        guard !finished, !aborted else { return }
        finished = true
        removeFile()
        onDone(.failure(error))
    }

    /// Closes (if open) and unlinks the file, off the loop.
    private func removeFile() {
        let (fd, path) = (descriptor, self.path)
        descriptor = -1
        busy = true
        loop.runBlocking({
            if fd >= 0 { close(fd) }
            unlink(path)
        }, then: { [self] in busy = false })
    }

    private static func writeAll(_ fd: Int32, _ bytes: [UInt8]) -> UploadSinkError? {
        var written = 0
        while written < bytes.count {
            let n = bytes.withUnsafeBytes { write(fd, $0.baseAddress! + written, bytes.count - written) }
            if n < 0 && errno == EINTR { continue }
            guard n > 0 else { return .io("write", errno) }
            written += n
        }
        return nil
    }

    /// Removes a finished upload's file if the handler left it (a refused type, a failed save). Off the loop.
    static func removeLeftover(_ path: String, loop: Loop) {
        loop.runBlocking({ _ = unlink(path) }, then: {})
    }
}

enum UploadSinkError: Error, Sendable {
    /// A file operation failed (the call and errno).
    case io(String, Int32)
}
