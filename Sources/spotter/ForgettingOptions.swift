import ArgumentParser
import SpotterServer

/// How long a message stays editable, and how soon what was deleted leaves the disk (deploy/README.md, "Deleting
/// and purging").
struct ForgettingOptions: ParsableArguments {
    @Option(name: .customLong("edit-window"), help: ArgumentHelp("""
        Seconds after a send during which its sender may edit it (1–2592000). [env: SPOTTER_EDIT_WINDOW] (default: 86400)
        """, valueName: "seconds"))
    var editWindow: Int?

    @Option(name: .customLong("purge-within"), help: ArgumentHelp("""
        Seconds within which a deleted message's or an erased account's bytes are gone from every file under \
        --data-dir (and from PostgreSQL's tables): the purge runs by then (1–86400). [env: SPOTTER_PURGE_WITHIN] \
        (default: 3600)
        """, valueName: "seconds"))
    var purgeWithin: Int?

    func apply(to config: inout ServerConfig) throws {
        let window = try editWindow ?? envInt("SPOTTER_EDIT_WINDOW") ?? Int(config.editWindowSeconds)
        guard (1...2_592_000).contains(window) else { throw ValidationError("--edit-window must be 1–2592000 seconds, got \(window)") }
        let within = try purgeWithin ?? envInt("SPOTTER_PURGE_WITHIN") ?? Int(config.purgeWithinSeconds)
        guard (1...86_400).contains(within) else { throw ValidationError("--purge-within must be 1–86400 seconds, got \(within)") }
        config.editWindowSeconds = Int64(window)
        config.purgeWithinSeconds = Int64(within)
    }
}
