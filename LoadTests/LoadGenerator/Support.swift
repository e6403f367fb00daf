import FoundationEssentials

#if canImport(Glibc)
import Glibc
#endif

import LoadSupport

/// Progress to stderr.
func progress(_ text: String) {
    var line = "[spotter-load] " + text + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
}

/// Unix time in seconds (session starts are on the server's wall clock).
func unixNow() -> Int64 { Int64(time(nil)) }
