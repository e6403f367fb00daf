// Shared by the load tools: clocks, /proc readings, formatting.
import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

// MARK: - Clock and process information

/// CLOCK_MONOTONIC in nanoseconds: the clock of the send stamps and of every window.
@inline(__always)
public func monotonicNanos() -> UInt64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return UInt64(now.tv_sec) &* 1_000_000_000 &+ UInt64(now.tv_nsec)
}

/// Raises the soft limit on open files to the hard limit. Returns the new soft limit.
@discardableResult
public func raiseOpenFileLimit() -> UInt64 {
    var limit = rlimit()
    guard getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 0 }
    if limit.rlim_cur < limit.rlim_max {
        limit.rlim_cur = limit.rlim_max
        if setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit) != 0 {
            _ = getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
    }
    return UInt64(limit.rlim_cur)
}

/// Reads a small file (a /proc entry) whole; nil if it cannot be opened.
public func readSmallFile(_ path: String) -> String? {
    let fd = open(path, O_RDONLY)
    guard fd >= 0 else { return nil }
    defer { close(fd) }
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count <= 0 { break }
        bytes.append(contentsOf: chunk[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// Memory and CPU of another process, from /proc (Linux).
public struct ProcessProbe {
    public let pid: Int32
    public init(pid: Int32) { self.pid = pid }

    /// Resident set size in bytes (`VmRSS` of /proc/PID/status).
    public func residentBytes() -> Int? {
        guard let status = readSmallFile("/proc/\(pid)/status") else { return nil }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            guard fields.count >= 2, let kib = Int(fields[1]) else { return nil }
            return kib * 1024
        }
        return nil
    }

    /// User + system CPU time in seconds (fields 14 and 15 of /proc/PID/stat).
    public func cpuSeconds() -> Double? {
        guard let stat = readSmallFile("/proc/\(pid)/stat"),
              let paren = stat.lastIndex(of: ")") else { return nil }
        // The command name may hold spaces; fields after it start at field 3 (state).
        let fields = stat[stat.index(after: paren)...].split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else { return nil }
        return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
    }
}

/// Several processes read as one (the servers of a cluster): CPU and RSS summed, nil if any cannot be read.
public struct ProcessGroupProbe {
    public let members: [ProcessProbe]
    public init(pids: [Int32]) { members = pids.map { ProcessProbe(pid: $0) } }

    public var pids: [Int32] { members.map(\.pid) }

    /// Each member's resident set size in bytes, in the order of `pids`.
    public func residentBytesEach() -> [Int]? { all { $0.residentBytes() } }

    public func residentBytes() -> Int? { residentBytesEach()?.reduce(0, +) }

    public func cpuSeconds() -> Double? { all { $0.cpuSeconds() }?.reduce(0, +) }

    private func all<T>(_ read: (ProcessProbe) -> T?) -> [T]? {
        let values = members.compactMap(read)
        return values.count == members.count ? values : nil
    }
}

/// CPU seconds (user + system) used by this process so far.
public func ownCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    let user = Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
    let system = Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return user + system
}

/// The current time in UTC as 2025-01-31T12:34:56Z.
public func utcTimestamp() -> String {
    var now = time(nil)
    var parts = tm()
    gmtime_r(&now, &parts)
    var buffer = [CChar](repeating: 0, count: 32)
    let count = strftime(&buffer, buffer.count, "%Y-%m-%dT%H:%M:%SZ", &parts)
    return String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// The first three fields of /proc/loadavg.
public func loadAverage() -> String {
    guard let text = readSmallFile("/proc/loadavg") else { return "unknown" }
    return text.split(separator: " ").prefix(3).joined(separator: " ")
}

/// `value` with `decimals` digits after the point, without Foundation's String(format:).
public func fixed(_ value: Double, _ decimals: Int = 1) -> String {
    guard value.isFinite else { return "n/a" }
    var scale = 1.0
    for _ in 0..<decimals { scale *= 10 }
    let scaled = (abs(value) * scale).rounded()
    let whole = Int(scaled / scale)
    let sign = value < 0 && scaled > 0 ? "-" : ""
    guard decimals > 0 else { return sign + String(whole) }
    let fraction = String(Int(scaled - Double(whole) * scale))
    return sign + String(whole) + "." + String(repeating: "0", count: decimals - fraction.count) + fraction
}


/// Milliseconds for a libuv timer from seconds.
public func milliseconds(_ seconds: Double) -> UInt64 { UInt64(max(0, (seconds * 1000).rounded())) }

/// Seconds between two monotonic stamps.
public func seconds(_ from: UInt64, _ to: UInt64) -> Double { Double(to &- from) / 1e9 }
