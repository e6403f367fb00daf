import FoundationEssentials
import SpotterCore
import SpotterPorts
import SpotterProtocol

#if canImport(Glibc)
import Glibc
#endif

/// Where an export has got to, and how to make its next piece: blocking (it reads the store and the files), so
/// only on a pool thread. The archive's layout is Protocol/README.md's "Export": the JSON documents first, then
/// each thread's messages a page at a time, then the files, then `manifest.json` (every entry before it, with its
/// size and SHA-256), then the two zero blocks that end a tar.
struct ExportCursor: Sendable {
    /// A piece is made up to about this size (a page of messages or a document may pass it once).
    static let pieceBytes = 256 * 1024
    /// Messages per `messages/<first>-<last>.jsonl` page: a page is built whole before its header is written.
    static let pageMessages = 200

    enum Stage: Sendable {
        case documents
        case thread(index: Int, beforeSeq: Int64?)
        case attachmentList
        case file(index: Int)
        case manifest
        case finished
    }

    let sources: ExportSources
    let snapshot: ExportSnapshot
    private(set) var stage = Stage.documents
    private(set) var entries: [ManifestEntry] = []
    /// Attachment files to copy (SHA-256 ids, each once), and those that were gone by the time they were read.
    private var files: [String] = []
    private var missing: [String] = []
    private var open: OpenExportFile?

    init(sources: ExportSources, snapshot: ExportSnapshot) {
        self.sources = sources
        self.snapshot = snapshot
    }

    /// The next bytes of the archive, nil once it has all been made.
    mutating func nextPiece() throws -> [UInt8]? {
        var out: [UInt8] = []
        while out.count < Self.pieceBytes {
            switch stage {
            case .documents:
                for (name, document) in try documents() { try add(name, Array(document.utf8), to: &out) }
                stage = snapshot.threads.isEmpty ? .attachmentList : .thread(index: 0, beforeSeq: nil)
            case .thread(let index, let before):
                stage = try addPage(ofThread: index, before: before, to: &out)
            case .attachmentList:
                try addAttachmentList(to: &out)
                stage = files.isEmpty ? .manifest : .file(index: 0)
            case .file(let index):
                if try copy(files[index], to: &out) {
                    stage = index + 1 < files.count ? .file(index: index + 1) : .manifest
                }
            case .manifest:
                let manifest = Manifest(userID: snapshot.userID, createdAt: sources.now, entries: entries, missingFiles: missing)
                try add("manifest.json", Array(JSONText.encoder.encodeToString(manifest).utf8), to: &out, listed: false)
                out += TarFormat.end
                stage = .finished
            case .finished:
                return out.isEmpty ? nil : out
            }
        }
        return out
    }

    // MARK: - Entries

    /// Appends a whole entry (header, bytes, padding) and lists it in the manifest.
    private mutating func add(_ name: String, _ bytes: [UInt8], to out: inout [UInt8], listed: Bool = true) throws {
        out += try TarFormat.header(name: name, size: Int64(bytes.count), modified: sources.now)
        out += bytes
        out += [UInt8](repeating: 0, count: TarFormat.padding(after: Int64(bytes.count)))
        if listed { entries.append(ManifestEntry(name: name, bytes: Int64(bytes.count), sha256: Digest.hex(Digest.sha256(bytes)))) }
    }

    /// One page of a thread's messages, newest pages first, each page's lines oldest first (as `history` shows
    /// them, session notices worded for this user). Answers the stage after it.
    private mutating func addPage(ofThread index: Int, before: Int64?, to out: inout [UInt8]) throws -> Stage {
        let thread = snapshot.threads[index]
        let page = try sources.log.history(threadNo: thread.no, beforeSeq: before, limit: Self.pageMessages)
        let reader: SessionActor = thread.coachID == snapshot.userID ? .coach : .client
        let views = page.reversed().compactMap { record in
            record.kind == .session
                ? SessionText.message(record, threadID: thread.id, recipient: reader, language: snapshot.language,
                                      timeZone: snapshot.timeZone)
                : ChatState.messageView(record, threadID: thread.id, senderID: record.side == .coach ? thread.coachID : thread.clientID)
        }
        if let first = page.last, let last = page.first {
            var lines: [UInt8] = []
            for view in views {
                lines += view.jsonText.utf8
                lines.append(10)
            }
            try add("threads/\(thread.id)/messages/\(first.seq)-\(last.seq).jsonl", lines, to: &out)
        }
        if page.count == Self.pageMessages, let oldest = page.last { return .thread(index: index, beforeSeq: oldest.seq) }
        return index + 1 < snapshot.threads.count ? .thread(index: index + 1, beforeSeq: nil) : .attachmentList
    }

    /// `attachments.json` (every file of the user's threads, and the avatar), and the list of files to copy.
    private mutating func addAttachmentList(to out: inout [UInt8]) throws {
        var rows: [AccountStore.ThreadAttachment] = []
        for thread in snapshot.threads { rows += try sources.accounts.attachments(threadID: thread.id) }
        let avatar = try sources.accounts.user(id: snapshot.userID)?.avatar
        var seen = Set<String>()
        files = (rows.map(\.id) + [avatar].compactMap { $0 }).filter { seen.insert($0).inserted }
        let list = AttachmentList(attachments: rows, avatar: avatar)
        try add("attachments.json", Array(JSONText.encoder.encodeToString(list).utf8), to: &out)
    }

    /// Copies as much of the file `id` as fits in this piece; true once it is all in (or it was gone).
    private mutating func copy(_ id: String, to out: inout [UInt8]) throws -> Bool {
        let file: OpenExportFile
        if let open {
            file = open
        } else {
            let path = sources.attachments.directory + "/" + id
            let fd = Glibc.open(path, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else {
                guard errno == ENOENT else { throw AttachmentStoreError.io("open", errno) }
                missing.append(id)  // removed since it was listed (a purge): the manifest says so
                return true
            }
            var info = stat()
            guard fstat(fd, &info) == 0 else {
                let error = errno
                Glibc.close(fd)
                throw AttachmentStoreError.io("fstat", error)
            }
            file = OpenExportFile(name: "attachments/" + id, fd: fd, size: Int64(info.st_size))
            out += try TarFormat.header(name: file.name, size: file.size, modified: sources.now)
            open = file
        }
        while file.remaining > 0 && out.count < Self.pieceBytes {
            let want = Int(min(file.remaining, Int64(max(Self.pieceBytes - out.count, 64 * 1024))))
            let start = out.count
            out += [UInt8](repeating: 0, count: want)
            let got = out.withUnsafeMutableBytes { Glibc.read(file.fd, $0.baseAddress! + start, want) }
            guard got >= 0 else { throw AttachmentStoreError.io("read", errno) }
            if got == 0 {
                // Shorter than when it was opened (overwritten in place): the header's size stands, so zeros fill
                // the rest and the manifest's digest tells the difference.
                out.withUnsafeBytes { file.hasher.update(UnsafeRawBufferPointer(rebasing: $0[start..<(start + want)])) }
                file.remaining -= Int64(want)
                continue
            }
            out.removeLast(want - got)
            out.withUnsafeBytes { file.hasher.update(UnsafeRawBufferPointer(rebasing: $0[start..<(start + got)])) }
            file.remaining -= Int64(got)
        }
        guard file.remaining == 0 else { return false }
        out += [UInt8](repeating: 0, count: TarFormat.padding(after: file.size))
        entries.append(ManifestEntry(name: file.name, bytes: file.size, sha256: Digest.hex(file.hasher.finish())))
        open = nil
        return true
    }
}

/// One entry of `manifest.json`.
struct ManifestEntry: Sendable, Encodable {
    var name: String
    var bytes: Int64
    var sha256: String
}

struct Manifest: Encodable {
    var format = "spotter-export"
    var version = 1
    var userID: String
    var createdAt: Int64
    var entries: [ManifestEntry]
    /// Attachments listed in `attachments.json` whose files were removed before they could be copied.
    var missingFiles: [String]
    enum CodingKeys: String, CodingKey {
        case format, version, entries
        case userID = "user_id", createdAt = "created_at", missingFiles = "missing_files"
    }
}

struct AttachmentList: Encodable {
    var attachments: [AccountStore.ThreadAttachment]
    /// The SHA-256 of the user's avatar image (its file is `attachments/<sha256>`), if they have one.
    var avatar: String?
}
