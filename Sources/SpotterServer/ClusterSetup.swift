import EventLoop
import SpotterBroker
import SpotterPorts

/// What makes a process one of a cluster (`spotter serve --store postgres://… --broker nats://…`): the broker
/// between processes, made on the loop's thread when the server starts; the shared log the process follows; and
/// the lease that lets one process at a time fire the session timers.
public struct ClusterSetup {
    public let makeBroker: (Loop) throws -> any ClusterBroker
    public let log: any FollowableLog
    public let lease: (any TimerLease)?
    /// Apply every record of every thread, as before interest by thread (`CoreRunner+Interest`):
    /// `SPOTTER_FOLLOW_EVERY_THREAD=1`, for measuring the difference and as a way back.
    public var followEveryThread = false

    public init(makeBroker: @escaping (Loop) throws -> any ClusterBroker, log: any FollowableLog, lease: (any TimerLease)?) {
        self.makeBroker = makeBroker
        self.log = log
        self.lease = lease
    }
}
