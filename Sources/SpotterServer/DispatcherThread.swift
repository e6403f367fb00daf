import Dispatch
import Synchronization

/// The thread the outboxes' dispatchers run on (push, webhooks), apart from the loop: wake-ups that many answers
/// arriving together coalesce into one, whether it may work (in a cluster, while this process holds the timer
/// lease), a pause a wake-up ends early, and a stop that waits for the thread's loop to end.
final class DispatcherThread: Sendable {
    private let label: String
    private let wakeSignal = DispatchSemaphore(value: 0)
    /// A wake-up is pending.
    private let woken = Atomic<Bool>(false)
    private let finished = DispatchSemaphore(value: 0)
    private let stopping = Atomic<Bool>(false)
    private let active = Atomic<Bool>(true)

    init(label: String) {
        self.label = label
    }

    /// Runs `body` on a thread of its own; `stop` waits for it to return.
    func start(_ body: @escaping @Sendable () -> Void) {
        DispatchQueue(label: label).async { [self] in
            body()
            finished.signal()
        }
    }

    var isStopping: Bool { stopping.load(ordering: .acquiring) }
    var isActive: Bool { active.load(ordering: .acquiring) }

    /// Something was queued or answered: look now rather than at the next poll.
    func wake() {
        if !woken.exchange(true, ordering: .acquiringAndReleasing) { wakeSignal.signal() }
    }

    func setActive(_ value: Bool) {
        active.store(value, ordering: .releasing)
        if value { wake() }
    }

    /// Waits `milliseconds`, or until a wake-up.
    func pause(_ milliseconds: Int) {
        _ = wakeSignal.wait(timeout: .now() + .milliseconds(milliseconds))
        woken.store(false, ordering: .releasing)
    }

    /// Asks the thread to stop and waits at most `timeoutMilliseconds` for it; false if it did not end in time.
    func stop(timeoutMilliseconds: Int) -> Bool {
        stopping.store(true, ordering: .releasing)
        wake()
        return finished.wait(timeout: .now() + .milliseconds(timeoutMilliseconds)) == .success
    }
}
