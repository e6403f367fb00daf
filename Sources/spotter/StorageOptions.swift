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

/// Options shared by every command that touches the database.
struct StorageOptions: ParsableArguments {
    @Option(name: .customLong("data-dir"), help: ArgumentHelp(
        "Directory for the SQLite database; created if missing. [env: SPOTTER_DATA_DIR] (default: data)",
        valueName: "path"))
    var dataDirectory: String?

    @Option(help: ArgumentHelp(
        "Log level: trace, debug, info, notice, warning, error, critical. [env: SPOTTER_LOG_LEVEL] (default: info)",
        valueName: "level"))
    var logLevel: String?

    @Option(help: ArgumentHelp(
        "Log lines as plain text, or as one JSON object per line (ts, level, label, message, metadata). [env: SPOTTER_LOG_FORMAT] (default: text)",
        valueName: "text|json"))
    var logFormat: String?

    @Option(help: ArgumentHelp("""
        A PostgreSQL database to keep everything in instead of SQLite in --data-dir (cluster mode's shared store), \
        as a libpq URL: postgres://user@host:port/database; attachment files and the token secret stay in \
        --data-dir. [env: SPOTTER_STORE]
        """, valueName: "url"))
    var store: String?

    var resolvedDataDirectory: String { dataDirectory ?? env("SPOTTER_DATA_DIR") ?? "data" }

    /// The accounts, in PostgreSQL with `--store`, else in the data directory's SQLite database (admin commands).
    func openAccounts(logger: Logger) throws -> AccountStore {
        if let url = try postgresURL() {
            let store = try PostgresStore(url: url, logger: logger)
            return AccountStore(engine: PostgresAccounts(store: store))
        }
        return AccountStore(try Store.open(directory: resolvedDataDirectory, logger: logger))
    }

    /// The PostgreSQL URL, if one is set (checked).
    func postgresURL() throws -> String? {
        guard let url = store ?? env("SPOTTER_STORE") else { return nil }
        guard url.hasPrefix("postgres://") || url.hasPrefix("postgresql://") else {
            throw ValidationError("--store must be a postgres:// or postgresql:// URL, got '\(url)'")
        }
        return url
    }

    func makeLogger() throws -> Logger {
        let text = logLevel ?? env("SPOTTER_LOG_LEVEL") ?? "info"
        guard let level = Logger.Level(rawValue: text) else {
            throw ValidationError("unknown log level '\(text)'")
        }
        let format = logFormat ?? env("SPOTTER_LOG_FORMAT") ?? "text"
        switch format {
        case "text":
            LoggingSystem.bootstrap { label in
                var handler = StreamLogHandler.standardError(label: label)
                handler.logLevel = level
                return handler
            }
        case "json":
            LoggingSystem.bootstrap { label in
                var handler = JSONLogHandler(label: label)
                handler.logLevel = level
                return handler
            }
        default:
            throw ValidationError("unknown log format '\(format)': text or json")
        }
        return Logger(label: "spotter")
    }
}
