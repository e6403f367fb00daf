import Foundation
import Synchronization

/// Runs an asynchronous store call and waits (at most 30 s) for its completion.
public func waitFor<T: Sendable>(_ call: (@escaping @Sendable (Result<T, any Error>) -> Void) -> Void) throws -> T {
    let box = Mutex<Result<T, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    call { result in
        box.withLock { $0 = result }
        done.signal()
    }
    guard done.wait(timeout: .now() + 30) == .success else {
        throw BlockingSocket.Failure(description: "the store call did not complete within 30 s")
    }
    return try box.withLock { $0! }.get()
}

/// Runs `script` (sh) once the test runner has exited, however it ends (kill -9 included): a small shell
/// process polls the runner every second. For servers the tests start (PostgreSQL, NATS).
public func whenRunnerExits(run script: String) throws {
    let runner = getpid()
    // The watcher first closes every descriptor it inherited past 0–2 (see below).
    let closeInherited = "for fd in $(ls /proc/$$/fd); do [ \"$fd\" -gt 2 ] && eval \"exec $fd>&-\"; done 2>/dev/null\n"
    let watch = closeInherited + "while kill -0 \(runner) 2>/dev/null; do sleep 1; done\n" + script
    var pid: pid_t = 0
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    posix_spawnattr_setflags(&attributes, 0x80)  // POSIX_SPAWN_SETSID (glibc): out of the runner's session
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    for fd: Int32 in [0, 1, 2] { posix_spawn_file_actions_addopen(&actions, fd, "/dev/null", fd == 0 ? O_RDONLY : O_WRONLY, 0) }
    // Nothing else of the runner's is kept (the script closes it): a pipe's write end held here would keep its reader
    // (a stand-in waiting for its stdin to close) alive as long as this watcher, which waits for the runner, which
    // `swift test` reaps only once every holder of its output has let go.
    let words: [String] = ["/bin/sh", "-c", watch]
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    defer { for pointer in argv { free(pointer) } }
    guard posix_spawn(&pid, "/bin/sh", &actions, &attributes, argv, environ) == 0 else {
        throw BlockingSocket.Failure(description: "cannot start a watchdog for the test runner")
    }
}

/// Kills `pid` once the test runner has exited.
public func killWhenRunnerExits(_ pid: Int32) {
    try? whenRunnerExits(run: "kill -9 \(pid) 2>/dev/null")
}

/// Waits until `condition` holds (checking every 10 ms), or throws after `timeout` saying what did not happen.
public func waitUntil(_ timeout: TimeInterval, _ what: @autoclosure () -> String = "condition", _ condition: () -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while !condition() {
        guard Date() < deadline else { throw BlockingSocket.Failure(description: "\(what()): not within \(timeout) s") }
        Thread.sleep(forTimeInterval: 0.01)
    }
}

/// Waits for a child started with Foundation's `Process` to end and returns its exit status (the signal's number
/// if a signal ended it), reaping it with waitpid itself: Process sometimes never sees a child end (seen here
/// with `runuser`, and with `nats-server` while other suites spawned processes: a defunct child and
/// `waitUntilExit` waiting for ever). Nil if it is still running after `timeout` seconds.
@discardableResult
public func reap(_ process: Process, timeout: TimeInterval = 20) -> Int32? {
    let pid = process.processIdentifier
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        var status: Int32 = 0
        let reaped = waitpid(pid, &status, WNOHANG)
        if reaped == pid {
            // WIFEXITED / WEXITSTATUS / WTERMSIG, spelled out: Glibc's macros do not reach Swift.
            return status & 0x7f == 0 ? (status >> 8) & 0xff : status & 0x7f
        }
        if reaped == -1 && errno == ECHILD {
            // Foundation reaped it first: its status is Process's.
            if (try? waitUntil(2) { !process.isRunning }) != nil { return process.terminationStatus }
            return nil
        }
        Thread.sleep(forTimeInterval: 0.01)
    }
    return nil
}
