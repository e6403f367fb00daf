import ArgumentParser
import Logging
import SpotterNATS
import SpotterPorts
import SpotterPostgres
import SpotterServer

/// Cluster mode: the NATS server between the processes and the subjects this deployment uses on it
/// (deploy/README.md, "Cluster mode").
struct ClusterOptions: ParsableArguments {
    @Option(help: ArgumentHelp("""
        Cluster mode: the NATS server (or cluster) between Spotter processes, as nats://host:port; needs \
        --store postgres://… shared by every process, and the same SPOTTER_TOKEN_SECRET in each. \
        [env: SPOTTER_BROKER] (default: none, one process alone)
        """, valueName: "url"))
    var broker: String?

    @Option(help: ArgumentHelp("""
        The first tokens of every NATS subject this deployment uses (<prefix>.user.…, <prefix>.presence, \
        <prefix>.log): two deployments sharing one NATS server need different prefixes, or they follow each \
        other's records. Tokens of [A-Za-z0-9_-] joined by '.', at most 64 bytes; every process of one \
        deployment uses the same. [env: SPOTTER_BROKER_SUBJECTS] (default: spotter)
        """, valueName: "prefix"))
    var brokerSubjects: String?

    /// Checked when the command line is read, before anything is opened.
    func validate() throws {
        _ = try brokerURL()
        _ = try subjects()
    }

    /// The broker's URL, or nil for one process alone.
    func brokerURL() throws -> String? {
        guard let url = broker ?? env("SPOTTER_BROKER") else {
            if brokerSubjects != nil || env("SPOTTER_BROKER_SUBJECTS") != nil {
                throw ValidationError("--broker-subjects is for cluster mode: it needs --broker nats://…")
            }
            return nil
        }
        guard url.hasPrefix("nats://") || url.hasPrefix("tls://") else {
            throw ValidationError("--broker must be a nats:// URL, got '\(url)'")
        }
        return url
    }

    func subjects() throws -> NATSSubjects {
        let prefix = brokerSubjects ?? env("SPOTTER_BROKER_SUBJECTS") ?? NATSSubjects.defaultPrefix
        guard let subjects = NATSSubjects(prefix: prefix) else {
            throw ValidationError("""
                --broker-subjects must be tokens of letters, digits, '-' and '_' joined by single dots, at most \
                \(NATSSubjects.maximumPrefixBytes) bytes (no '*', '>', spaces or empty tokens), got '\(prefix)'
                """)
        }
        return subjects
    }

    func setup(brokerURL: String, postgresURL: String, log: any FollowableLog, logger: Logger) throws -> ClusterSetup {
        let subjects = try subjects()
        var natsLogger = logger
        natsLogger[metadataKey: "component"] = "nats"
        var setup = ClusterSetup(
            makeBroker: { loop in try NATSBroker(loop: loop, url: brokerURL, subjects: subjects, logger: natsLogger) },
            log: log, lease: PostgresTimerLease(url: postgresURL))
        setup.followEveryThread = env("SPOTTER_FOLLOW_EVERY_THREAD") == "1"
        logger.info("cluster mode", metadata: ["broker": "\(NATSWire.loggable(url: brokerURL))", "subjects": "\(subjects.prefix)"])
        return setup
    }
}
