import Foundation
import Testing
import SpotterCore

/// The ustar writer's bytes, field by field, and read back by Python's `tarfile` (an independent reader).
@Suite("ustar headers")
struct TarFormatTests {
    static func field(_ block: [UInt8], _ offset: Int, _ width: Int) -> String {
        String(decoding: block[offset..<(offset + width)].prefix { $0 != 0 }, as: UTF8.self)
    }

    @Test func aHeaderHasTheFieldsUstarReadersCheck() throws {
        let block = try TarFormat.header(name: "profile.json", size: 1234, modified: 1_790_000_000)
        #expect(block.count == 512)
        #expect(Self.field(block, 0, 100) == "profile.json")
        #expect(Self.field(block, 100, 8) == "0000644")
        #expect(Self.field(block, 124, 12) == "00000002322")  // 1234 in octal
        #expect(Int(Self.field(block, 136, 12), radix: 8) == 1_790_000_000)
        #expect(block[156] == UInt8(ascii: "0"))
        #expect(Self.field(block, 257, 6) == "ustar" && Self.field(block, 263, 2) == "00")
        // The checksum: the bytes' sum with the checksum field read as spaces, six octal digits, NUL, space.
        var summed = block
        for index in 148..<156 { summed[index] = 32 }
        #expect(Int(Self.field(block, 148, 6), radix: 8) == summed.reduce(0) { $0 + Int($1) })
        #expect(block[154] == 0 && block[155] == 32)
    }

    @Test func aLongNameIsSplitIntoPrefixAndName() throws {
        let directory = "threads/" + String(repeating: "d", count: 36) + "/messages"
        let name = directory + "/" + String(repeating: "9", count: 25) + "-" + String(repeating: "9", count: 25) + ".jsonl"
        #expect(name.utf8.count > 100)
        let block = try TarFormat.header(name: name, size: 0, modified: 0)
        #expect(Self.field(block, 345, 155) == directory)
        #expect(Self.field(block, 0, 100) == String(name.dropFirst(directory.count + 1)))
        // A last component over 100 bytes cannot be split; nor can unsafe names be written.
        #expect(throws: TarFormat.Refusal.self) { try TarFormat.header(name: String(repeating: "a", count: 101), size: 0, modified: 0) }
        for bad in ["", "/etc/passwd", "a/../b", "a//b", "naïve", "a\u{0}b"] {
            #expect(throws: TarFormat.Refusal.badName(bad)) { try TarFormat.header(name: bad, size: 0, modified: 0) }
        }
        #expect(throws: TarFormat.Refusal.tooLarge(TarFormat.maxEntryBytes + 1)) {
            try TarFormat.header(name: "big", size: TarFormat.maxEntryBytes + 1, modified: 0)
        }
    }

    @Test func paddingFillsTheLastBlockOnly() {
        #expect(TarFormat.padding(after: 0) == 0)
        #expect(TarFormat.padding(after: 1) == 511)
        #expect(TarFormat.padding(after: 512) == 0)
        #expect(TarFormat.padding(after: 513) == 511)
        #expect(TarFormat.end == [UInt8](repeating: 0, count: 1024))
    }

    @Test func pythonsTarfileReadsWhatIsWritten() throws {
        guard let python = ["/usr/bin/python3", "/usr/local/bin/python3"].first(where: FileManager.default.isExecutableFile) else { return }
        let long = "threads/" + String(repeating: "e", count: 36) + "/messages/" + String(repeating: "1", count: 30) + "-"
            + String(repeating: "2", count: 30) + ".jsonl"
        let entries: [(String, [UInt8])] = [("empty.json", []), ("a.json", Array("{\"x\":\"\\u0001 مرحبا\"}\n".utf8)),
                                            (long, (0..<1500).map { UInt8($0 % 251) }), ("block", [UInt8](repeating: 7, count: 512))]
        var archive: [UInt8] = []
        for (name, bytes) in entries {
            archive += try TarFormat.header(name: name, size: Int64(bytes.count), modified: 1_700_000_000)
            archive += bytes + [UInt8](repeating: 0, count: TarFormat.padding(after: Int64(bytes.count)))
        }
        archive += TarFormat.end
        #expect(archive.count % 512 == 0)
        let path = NSTemporaryDirectory() + "tarformat-\(UUID().uuidString).tar"
        try Data(archive).write(to: URL(fileURLWithPath: path))
        defer { try? FileManager.default.removeItem(atPath: path) }
        let script = """
            import sys, tarfile, hashlib
            with tarfile.open(sys.argv[1], format=tarfile.USTAR_FORMAT, errorlevel=2) as t:
                for m in t.getmembers():
                    assert m.isfile() and m.mode == 0o644 and m.mtime == 1700000000, m
                    print(m.name, m.size, hashlib.sha256(t.extractfile(m).read()).hexdigest())
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: python)
        process.arguments = ["-c", script, path]
        let output = Pipe()
        process.standardOutput = output
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0)
        let lines = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self).split(separator: "\n")
        #expect(lines.map(String.init) == entries.map { "\($0.0) \($0.1.count) \(Digest.hex(Digest.sha256($0.1)))" })
    }
}
