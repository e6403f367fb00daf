import EventLoop
import SpotterCore
import SpotterPorts
import WebSocket

#if canImport(Glibc)
import Glibc
#endif

/// `GET /v1/me/export`'s body: a ustar archive made a piece at a time on libuv's pool and handed to the connection
/// (`ResponseStream`), which asks for the next piece only once the kernel took the last. At most one piece
/// (about `ExportCursor.pieceBytes`, or one page of messages) is in memory per export, whatever the sizes of
/// the user's threads and files. Loop thread only; the pieces are made by `ExportCursor` off the loop.
final class ExportArchive: ResponseStream {
    let head: HTTPResponse
    private let loop: Loop
    /// Held here between pieces; nil before the first and while a piece is being made (on a pool thread then).
    private var cursor: ExportCursor?
    /// Makes the cursor before the first piece (`API.exportRoute`: the user's threads loaded, the snapshot taken).
    private var prepare: ((@escaping (Result<ExportCursor, any Error>) -> Void) -> Void)?
    private var done = false
    private let released: () -> Void

    init(loop: Loop, userID: String, prepare: @escaping (@escaping (Result<ExportCursor, any Error>) -> Void) -> Void,
         released: @escaping () -> Void) {
        self.loop = loop
        self.prepare = prepare
        self.released = released
        head = HTTPResponse(status: 200, headers: [
            ("Content-Type", "application/x-tar"),
            ("Content-Disposition", "attachment; filename=\"spotter-export-\(userID).tar\""),
            ("Cache-Control", "no-store"),
            ("X-Content-Type-Options", "nosniff"),
        ])
    }

    func next(_ deliver: @escaping (Result<[UInt8]?, any Error>) -> Void) {
        if let prepare {
            self.prepare = nil
            return prepare { [self] prepared in
                guard !done else { return }
                switch prepared {
                case .success(let made):
                    cursor = made
                    next(deliver)
                case .failure(let error):
                    deliver(.failure(error))
                }
            }
        }
        guard let taken = cursor else { preconditionFailure("the connection asked for a piece while one was being made") }
        cursor = nil
        loop.runBlocking({ () -> ExportStep in
            var working = taken
            let piece = Result { try working.nextPiece() }
            return ExportStep(cursor: working, piece: piece)
        }, then: { [self] step in
            guard !done else { return }  // the connection went meanwhile: the cursor (and any open file) is dropped
            cursor = step.cursor
            deliver(step.piece)
        })
    }

    func finish() {
        guard !done else { return }
        done = true
        cursor = nil  // an open file closes with it (`OpenExportFile`); one being made is dropped when it comes back
        released()
    }
}

/// A piece made off the loop, and the cursor that made it, handed back to the loop together.
struct ExportStep: Sendable {
    var cursor: ExportCursor
    var piece: Result<[UInt8]?, any Error>
}

/// Where the sources of an export are: the accounts, the files, the log.
struct ExportSources: Sendable {
    let accounts: AccountStore
    let attachments: AttachmentStore
    let log: any ChatStore
    let now: Int64
}

/// An attachment being copied into the archive: its open file (so that a removal meanwhile does not cut it short),
/// the bytes still to copy and their digest so far. Used by one pool thread at a time: the cursor holding it is
/// handed from the loop to one job and back (`ExportArchive.next`), never shared.
final class OpenExportFile: @unchecked Sendable {
    let name: String
    let fd: Int32
    let size: Int64
    var remaining: Int64
    let hasher = SHA256Stream()

    init(name: String, fd: Int32, size: Int64) {
        self.name = name
        self.fd = fd
        self.size = size
        remaining = size
    }

    deinit { Glibc.close(fd) }
}
