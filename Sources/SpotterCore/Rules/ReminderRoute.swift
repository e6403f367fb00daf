/// Where one person's reminder of a session starting soon goes off the app (issue 28, item 7): by email or SMS, to a
/// person who chose it, or who has no device to push it to.
///
/// | reminders | devices | channels chosen | off the app |
/// |---|---|---|---|
/// | off | any | any | nothing |
/// | on | one or more | `push` only | nothing (the push carries it) |
/// | on | one or more | `push` with `email`/`sms` | each of those it can reach |
/// | on | none, or `push` not chosen | any | each of `email`/`sms` chosen it can reach; if none, email, else SMS |
///
/// A channel can reach the person when the server has its gateway and the account has the address (the phone is the
/// one the person signed in with by code; the email the one they signed up with or confirmed by code). A person it
/// cannot reach at all gets nothing (`unreachable`), which the caller counts.
///
/// Guarantees: pure.
public enum ReminderRoute {
    public struct Target: Sendable, Equatable {
        public var channel: ReminderChannel
        /// The email address or the phone number.
        public var address: String

        public init(_ channel: ReminderChannel, _ address: String) {
            self.channel = channel
            self.address = address
        }
    }

    public enum Decision: Sendable, Equatable {
        /// Reminders are off.
        case off
        /// Pushed only: nothing goes off the app.
        case pushOnly
        /// Sent to each, email first.
        case send([Target])
        /// The person wants it, or has no device, and no gateway reaches them.
        case unreachable
    }

    /// - Parameters:
    ///   - hasDevice: whether the person has a registered push device;
    ///   - gateways: the off-app channels the server can send through (`email`, `sms`).
    public static func decide(_ preferences: NotificationPreferences, hasDevice: Bool, email: String?, phone: String?,
                              gateways: Set<ReminderChannel>) -> Decision {
        guard preferences.reminders else { return .off }
        var reachable: [Target] = []
        if gateways.contains(.email), let email, !email.isEmpty { reachable.append(Target(.email, email)) }
        if gateways.contains(.sms), let phone, !phone.isEmpty { reachable.append(Target(.sms, phone)) }
        let chosen = reachable.filter { preferences.reminderChannels.contains($0.channel) }
        if hasDevice && preferences.reminderChannels.contains(.push) {
            return chosen.isEmpty ? .pushOnly : .send(chosen)
        }
        if !chosen.isEmpty { return .send(chosen) }
        return reachable.first.map { .send([$0]) } ?? .unreachable
    }
}
