import Foundation
import Testing

/// The ports stay free of engines (DESIGN.md, "Engines plug in behind small ports"): read from the package's own
/// files, so that re-adding SpotterStore to SpotterPostgres's dependencies, or GRDB to a port, fails here.
@Suite("Ports without an engine")
struct PortsBoundaryTests {
    /// The package root: three levels above this file (Tests/SpotterStoreTests/<this file>).
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    @Test func postgresDependsOnThePortsAndNotOnSQLitesEngine() throws {
        let manifest = try String(contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
        let postgres = try #require(Self.dependencies(of: "SpotterPostgres", in: manifest))
        #expect(postgres.contains("\"SpotterPorts\""))
        #expect(!postgres.contains("SpotterStore"))
        #expect(!postgres.contains("GRDB"))
        let ports = try #require(Self.dependencies(of: "SpotterPorts", in: manifest))
        for engine in ["SpotterStore", "SpotterPostgres", "GRDB", "CLibPQ"] {
            #expect(!ports.contains(engine), "SpotterPorts depends on \(engine)")
        }
    }

    @Test func noPortImportsAnEngine() throws {
        let offenders = try Self.imports(under: "Sources/SpotterPorts", of: ["GRDB", "GRDBSQLite", "SpotterStore", "SpotterPostgres", "CLibPQ"])
        #expect(offenders.isEmpty, "\(offenders)")
        #expect(try !Self.swiftFiles(under: "Sources/SpotterPorts").isEmpty)
    }

    @Test func postgresImportsNothingOfSQLite() throws {
        let offenders = try Self.imports(under: "Sources/SpotterPostgres", of: ["GRDB", "GRDBSQLite", "SpotterStore"])
        #expect(offenders.isEmpty, "\(offenders)")
    }

    @Test func theManifestReaderFindsAnEngineDependency() throws {
        // The reader above must see a dependency where there is one, or the first test could never fail.
        let manifest = """
            .target(name: "SpotterPorts", dependencies: ["SpotterCore"]),
            .target(
                name: "SpotterPostgres",
                dependencies: [
                    "CLibPQ", "SpotterStore",
                ],
                exclude: ["CLUSTER.md"]
            ),
            .target(name: "SpotterWeb", dependencies: ["WebSocket"]),
            """
        #expect(try #require(Self.dependencies(of: "SpotterPostgres", in: manifest)).contains("SpotterStore"))
        #expect(try #require(Self.dependencies(of: "SpotterPorts", in: manifest)) == #"["SpotterCore"]"#)
    }

    /// The text of a target's `dependencies: [...]` list in Package.swift (nil if the target or its list is missing).
    static func dependencies(of target: String, in manifest: String) -> String? {
        guard let name = manifest.range(of: "name: \"\(target)\"") else { return nil }
        // The target's declaration ends at the line where the next one starts.
        let starts = [".target(", ".executableTarget(", ".testTarget(", ".systemLibrary("]
        let declaration = manifest[name.upperBound...].split(separator: "\n", omittingEmptySubsequences: false)
            .prefix { line in !starts.contains { line.drop { $0 == " " }.hasPrefix($0) } }
            .joined(separator: "\n")
        guard let label = declaration.range(of: "dependencies: [") else { return nil }
        var depth = 0
        var index = declaration.index(before: label.upperBound)
        while index < declaration.endIndex {
            if declaration[index] == "[" { depth += 1 }
            if declaration[index] == "]" {
                depth -= 1
                if depth == 0 { return String(declaration[declaration.index(before: label.upperBound)...index]) }
            }
            index = declaration.index(after: index)
        }
        return nil
    }

    static func swiftFiles(under folder: String) throws -> [URL] {
        let directory = root.appendingPathComponent(folder)
        guard let walker = FileManager.default.enumerator(at: directory, includingPropertiesForKeys: nil) else { return [] }
        return walker.compactMap { $0 as? URL }.filter { $0.pathExtension == "swift" }
    }

    /// "file: import Module" for each import of one of `modules` (plain or `@testable`) in a Swift file under `folder`.
    static func imports(under folder: String, of modules: [String]) throws -> [String] {
        var found: [String] = []
        for file in try swiftFiles(under: folder) {
            for line in try String(contentsOf: file, encoding: .utf8).split(separator: "\n") {
                let words = line.split(separator: " ").map(String.init)
                guard let at = words.firstIndex(of: "import"), at + 1 < words.count, modules.contains(words[at + 1]) else { continue }
                found.append("\(file.lastPathComponent): \(line)")
            }
        }
        return found
    }
}
