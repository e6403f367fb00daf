import Foundation
import Testing
import SpotterProtocol
@testable import SpotterCore

@Suite("Notification preferences: what a PUT may say, and what each setting does to each push")
struct RulesNotificationTests {
    static let riyadh = TimeZone(identifier: "Asia/Riyadh")!
    static let newYork = TimeZone(identifier: "America/New_York")!
    /// 2026-01-15 00:00:00 UTC.
    static let midnightUTC: Int64 = 1_768_435_200

    func refusal(_ request: NotificationSettingsRequest, now: Int64 = 1_000) -> String? {
        thrownAPIError { () throws(APIError) in try NotificationRules.check(request, now: now) }
            .map { "\($0.code.rawValue) \($0.field ?? "-")" }
    }

    @Test func wallClockTimesAreHHMM() {
        #expect(NotificationRules.minute("00:00") == 0 && NotificationRules.minute("23:59") == 1439)
        #expect(NotificationRules.minute("07:30") == 450)
        for bad in ["24:00", "7:00", "07:60", "07:0", "0700", "07:00 ", " 07:00", "٠٧:٠٠", "07-00", "", "+7:00", "07:+0"] {
            #expect(NotificationRules.minute(bad) == nil, "\(bad)")
        }
        #expect(QuietHours.text(0) == "00:00" && QuietHours.text(1439) == "23:59" && QuietHours.text(425) == "07:05")
    }

    @Test func quietHoursAreCheckedAndNullRemovesThem() throws {
        let set = try NotificationRules.check(.init(quietHours: .some(.init(start: "22:00", end: "07:00"))), now: 0)
        #expect(set.quietHours == .some(QuietHours(start: 1320, end: 420)))
        let removed = try NotificationRules.check(.init(quietHours: .some(nil)), now: 0)
        #expect(removed.quietHours == .some(nil))
        let untouched = try NotificationRules.check(.init(messages: false), now: 0)
        #expect(untouched.quietHours == nil && untouched.messages == false && untouched.mutedThreads == nil)
        #expect(refusal(.init(quietHours: .some(.init(start: nil, end: "07:00")))) == "missing_field quiet_hours.start")
        #expect(refusal(.init(quietHours: .some(.init(start: "22:00", end: nil)))) == "missing_field quiet_hours.end")
        #expect(refusal(.init(quietHours: .some(.init(start: "25:00", end: "07:00")))) == "bad_request quiet_hours.start")
        #expect(refusal(.init(quietHours: .some(.init(start: "22:00", end: "7am")))) == "bad_request quiet_hours.end")
        #expect(refusal(.init(quietHours: .some(.init(start: "22:00", end: "22:00")))) == "out_of_range quiet_hours.end")
    }

    @Test func mutesAreBounded() throws {
        let now: Int64 = 1_000
        let mutes = try NotificationRules.check(.init(mutedThreads: [.init(threadId: "t1", until: nil),
                                                                     .init(threadId: "t2", until: now + 1)]), now: now)
        #expect(mutes.mutedThreads == [ThreadMute(threadID: "t1", until: nil), ThreadMute(threadID: "t2", until: now + 1)])
        #expect(try NotificationRules.check(.init(mutedThreads: []), now: now).mutedThreads == [])
        let year = NotificationRules.maxMuteSeconds
        #expect(refusal(.init(mutedThreads: [.init(threadId: "t", until: now + year)])) == nil)
        #expect(refusal(.init(mutedThreads: [.init(threadId: "t", until: now + year + 1)])) == "out_of_range muted_threads.until")
        #expect(refusal(.init(mutedThreads: [.init(threadId: "t", until: now)])) == "out_of_range muted_threads.until")
        #expect(refusal(.init(mutedThreads: [.init(threadId: nil, until: nil)])) == "missing_field muted_threads.thread_id")
        #expect(refusal(.init(mutedThreads: [.init(threadId: "a b", until: nil)])) == "bad_request muted_threads.thread_id")
        #expect(refusal(.init(mutedThreads: [.init(threadId: String(repeating: "x", count: 65), until: nil)]))
            == "bad_request muted_threads.thread_id")
        #expect(refusal(.init(mutedThreads: [.init(threadId: "t", until: nil), .init(threadId: "t", until: nil)]))
            == "bad_request muted_threads.thread_id")
        let many = (0...NotificationRules.maxMutedThreads).map { ThreadMuteBody(threadId: "t\($0)", until: nil) }
        #expect(refusal(.init(mutedThreads: many)) == "out_of_range muted_threads")
        #expect(refusal(.init(mutedThreads: Array(many.dropLast()))) == nil)
    }

    /// The table of `NotificationPolicy`, row by row.
    @Test func eachSettingDoesWhatTheTableSays() throws {
        let noon = Self.midnightUTC + 9 * 3600  // 12:00 in Riyadh
        var prefs = NotificationPreferences()
        func delivery(_ kind: NotificationPolicy.Kind, _ at: Int64 = noon, thread: String? = "t") -> NotificationPolicy.Delivery {
            NotificationPolicy.delivery(kind, threadID: thread, prefs, now: at, zone: Self.riyadh)
        }
        #expect([delivery(.message), delivery(.session), delivery(.reminder)] == [.alert, .alert, .alert])
        // Quiet hours around noon: messages and sessions come quietly, a reminder still alerts.
        prefs.quietHours = QuietHours(start: 11 * 60, end: 13 * 60)
        #expect([delivery(.message), delivery(.session), delivery(.reminder)] == [.quiet, .quiet, .alert])
        // A muted thread: its messages are skipped, its sessions are not, other threads' messages are not.
        prefs.mutedThreads = [ThreadMute(threadID: "t", until: noon + 60)]
        #expect([delivery(.message), delivery(.session), delivery(.reminder)] == [.skip, .quiet, .alert])
        #expect(delivery(.message, thread: "other") == .quiet)
        // The mute ends at `until`.
        #expect(delivery(.message, noon + 59) == .skip && delivery(.message, noon + 60) == .quiet)
        // A category off skips its kind, reminders included.
        prefs = NotificationPreferences(messages: false, sessions: false, reminders: false, quietHours: nil, mutedThreads: [])
        #expect([delivery(.message), delivery(.session), delivery(.reminder)] == [.skip, .skip, .skip])
        prefs.reminders = true
        #expect(delivery(.reminder) == .alert)
        // Reminders by email only: not pushed; with push among the channels, pushed.
        prefs.reminderChannels = [.email]
        #expect(delivery(.reminder) == .skip)
        prefs.reminderChannels = [.email, .push]
        #expect(delivery(.reminder) == .alert)
    }

    @Test func quietHoursAreReadInTheUsersZoneAcrossMidnight() {
        var prefs = NotificationPreferences()
        prefs.quietHours = QuietHours(start: 22 * 60, end: 7 * 60)
        func quiet(_ at: Int64, _ zone: TimeZone = Self.riyadh) -> Bool {
            NotificationPolicy.delivery(.message, threadID: nil, prefs, now: at, zone: zone) == .quiet
        }
        // Riyadh is UTC+3 all year: 22:00 there is 19:00 UTC, 07:00 is 04:00 UTC.
        let day = Self.midnightUTC
        #expect(!quiet(day + 19 * 3600 - 60) && quiet(day + 19 * 3600))
        #expect(quiet(day + 4 * 3600 - 60) && !quiet(day + 4 * 3600))
        #expect(quiet(day) && !quiet(day + 12 * 3600))
        // New York: 22:00 is 03:00 UTC in winter (UTC-5) and 02:00 UTC in summer (UTC-4).
        let july: Int64 = 1_783_900_800  // 2026-07-13 00:00 UTC
        #expect(quiet(day + 3 * 3600, Self.newYork) && !quiet(day + 3 * 3600 - 60, Self.newYork))
        #expect(quiet(july + 2 * 3600, Self.newYork) && !quiet(july + 2 * 3600 - 60, Self.newYork))
        #expect(NotificationPolicy.minuteOfDay(-60, TimeZone(identifier: "UTC")!) == 1439)
    }

    @Test func theViewLeavesEndedMutesOut() {
        let prefs = NotificationPreferences(messages: true, sessions: false, reminders: true,
                                            quietHours: QuietHours(start: 60, end: 120),
                                            mutedThreads: [ThreadMute(threadID: "a", until: 100), ThreadMute(threadID: "b", until: nil)])
        let view = prefs.settings(timeZone: "Asia/Riyadh", now: 100)
        #expect(view == NotificationSettings(messages: true, sessions: false, reminders: true,
                                             quietHours: QuietHoursBody(start: "01:00", end: "02:00"),
                                             mutedThreads: [ThreadMuteBody(threadId: "b", until: nil)], timeZone: "Asia/Riyadh"))
    }
}

/// Where a reminder goes off the app (`ReminderRoute`) and what `reminder_channels` may say.
@Suite("Reminder routes")
struct ReminderRouteTests {
    static let both: Set<ReminderChannel> = [.email, .sms]

    func route(_ channels: Set<ReminderChannel>, reminders: Bool = true, device: Bool, email: String? = "a@b.test",
               phone: String? = "+966551234567", gateways: Set<ReminderChannel> = both) -> ReminderRoute.Decision {
        var preferences = NotificationPreferences()
        preferences.reminders = reminders
        preferences.reminderChannels = channels
        return ReminderRoute.decide(preferences, hasDevice: device, email: email, phone: phone, gateways: gateways)
    }

    @Test func theTable() {
        let email = ReminderRoute.Target(.email, "a@b.test"), sms = ReminderRoute.Target(.sms, "+966551234567")
        #expect(route([.push], reminders: false, device: false) == .off)
        #expect(route([.email, .sms], reminders: false, device: true) == .off)
        #expect(route([.push], device: true) == .pushOnly)
        #expect(route([.push, .sms], device: true) == .send([sms]))
        #expect(route([.push, .email, .sms], device: true) == .send([email, sms]))
        // No device: what was chosen, else email, else SMS.
        #expect(route([.push], device: false) == .send([email]))
        #expect(route([.push], device: false, email: nil) == .send([sms]))
        #expect(route([.push], device: false, email: "") == .send([sms]))
        #expect(route([.sms], device: false) == .send([sms]))
        // Push not chosen: never only pushed, even with a device.
        #expect(route([.email], device: true) == .send([email]))
        #expect(route([.sms], device: true, phone: nil) == .send([email]), "the chosen channel cannot reach them")
        // A channel without a gateway reaches no one.
        #expect(route([.email], device: true, gateways: [.sms]) == .send([sms]))
        #expect(route([.push, .email], device: true, gateways: [.sms]) == .pushOnly)
        #expect(route([.push], device: false, email: nil, phone: nil) == .unreachable)
        #expect(route([.push], device: false, gateways: []) == .unreachable)
    }

    @Test func storedListsAndWireOrder() {
        #expect(ReminderChannel.stored(nil) == [.push] && ReminderChannel.stored("") == [.push])
        #expect(ReminderChannel.stored("sms,push,pigeon") == [.sms, .push])
        #expect(ReminderChannel.stored("pigeon") == [.push])
        #expect(ReminderChannel.names([.sms, .email, .push]) == ["push", "email", "sms"])
        var preferences = NotificationPreferences()
        #expect(preferences.remindsByPush)
        preferences.reminderChannels = [.email]
        #expect(!preferences.remindsByPush)
        preferences.reminderChannels = [.push]
        preferences.reminders = false
        #expect(!preferences.remindsByPush)
    }

    @Test func whatAPutMaySay() throws {
        func check(_ names: [String]) -> String {
            do {
                let change = try NotificationRules.check(NotificationSettingsRequest(reminderChannels: names), now: 0)
                return ReminderChannel.names(change.reminderChannels ?? []).joined(separator: ",")
            } catch {
                return "\(error.code.rawValue) \(error.field ?? "")"
            }
        }
        #expect(check(["email", "push"]) == "push,email")
        #expect(check(["sms"]) == "sms")
        #expect(check([]) == "out_of_range reminder_channels")
        #expect(check(["push", "push"]) == "bad_request reminder_channels")
        #expect(check(["Push"]) == "bad_request reminder_channels")
        #expect(check(["push", ""]) == "bad_request reminder_channels")
        #expect(check(["push", "email", "sms", "fax"]) == "bad_request reminder_channels")
        #expect(try NotificationRules.check(NotificationSettingsRequest(messages: false), now: 0).reminderChannels == nil)
    }
}
