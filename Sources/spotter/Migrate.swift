import ArgumentParser
import Logging
import FoundationEssentials
import SpotterPorts
import SpotterPostgres
import SpotterServer
import SpotterStore

#if canImport(Glibc)
import Glibc
#endif

struct Migrate: ParsableCommand {
    static let configuration = CommandConfiguration(abstract: "Create or migrate the database, then exit.")

    @OptionGroup var storage: StorageOptions

    func run() throws {
        let logger = try storage.makeLogger()
        if let url = try storage.postgresURL() {
            let now = try PostgresSchema.migrate(url: url)
            print("migrations applied now: \(now.isEmpty ? "none" : now.joined(separator: ", "))")
            print("migrations applied: \(try PostgresSchema.applied(url: url).joined(separator: ", "))")
            return
        }
        let store = try Store.open(directory: storage.resolvedDataDirectory, logger: logger)
        print("migrations applied: \(try store.appliedMigrations().joined(separator: ", "))")
    }
}

func env(_ name: String) -> String? {
    guard let value = getenv(name) else { return nil }
    let text = String(cString: value)
    return text.isEmpty ? nil : text
}

func envInt(_ name: String) throws -> Int? {
    guard let text = env(name) else { return nil }
    guard let value = Int(text) else { throw ValidationError("\(name) must be a whole number, got '\(text)'") }
    return value
}

extension String {
    func trimmed() -> String {
        String(drop { $0 == " " }.reversed().drop { $0 == " " }.reversed())
    }
}
