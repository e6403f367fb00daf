/// Stable machine-readable error codes.
///
/// Guarantees: raw values are snake_case strings on the wire and never change once shipped; every case
/// has an HTTP status and a message in every `Language` (see `entry`, the one table that holds them).
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    /// 400: malformed JSON, wrong field types, unknown enum values.
    case badRequest = "bad_request"
    /// 400: a required field is absent or empty.
    case missingField = "missing_field"
    /// 400: the email address is not in a usable format.
    case invalidEmail = "invalid_email"
    /// 400: the name is empty after trimming, or longer than 100 characters.
    case invalidName = "invalid_name"
    /// 400: the password has fewer than 6 characters.
    case passwordTooShort = "password_too_short"
    /// 400: the confirmation differs from the password.
    case passwordMismatch = "password_mismatch"
    /// 400: a sign-up role other than client or coach.
    case invalidRole = "invalid_role"
    /// 400: not a Saudi mobile number.
    case invalidPhone = "invalid_phone"
    /// 400: not an IANA time zone name (such as Asia/Riyadh) or UTC.
    case invalidTimeZone = "invalid_time_zone"
    /// 400: a value outside its allowed range.
    case outOfRange = "out_of_range"
    /// 409: an account already uses this email address.
    case emailTaken = "email_taken"
    /// 401: wrong email or password; never says which.
    case invalidCredentials = "invalid_credentials"
    /// 401: no token, or a malformed one.
    case unauthorized = "unauthorized"
    /// 401: the access token has expired.
    case tokenExpired = "token_expired"
    /// 401: the refresh token is unknown, expired or revoked.
    case refreshTokenInvalid = "refresh_token_invalid"
    /// 401: a rotated refresh token came back; its whole family is revoked.
    case refreshTokenReused = "refresh_token_reused"
    /// 403: the role or relationship does not allow this.
    case forbidden = "forbidden"
    /// 404: no such resource.
    case notFound = "not_found"
    /// 405: the HTTP method is not allowed on this path.
    case methodNotAllowed = "method_not_allowed"
    /// 409: a generic conflict with the current state.
    case conflict = "conflict"
    /// 409: the client already has a coach; request a change instead.
    case coachAlreadyAssigned = "coach_already_assigned"
    /// 409: the client has no coach.
    case noCoachAssigned = "no_coach_assigned"
    /// 409: a coach change request is already pending.
    case coachChangePending = "coach_change_pending"
    /// 404: no coach with this id.
    case coachNotFound = "coach_not_found"
    /// 409: approving or rejecting a change request that is already decided.
    case requestNotPending = "request_not_pending"
    /// 429: too many attempts.
    case rateLimited = "rate_limited"
    /// 429: a new sign-in code was requested too soon after the last one.
    case otpResendTooSoon = "otp_resend_too_soon"
    /// 400: the sign-in code is wrong.
    case otpInvalid = "otp_invalid"
    /// 400: the sign-in code is older than 5 minutes, or none was requested.
    case otpExpired = "otp_expired"
    /// 429: 5 wrong codes were entered; a new code must be requested.
    case otpTooManyAttempts = "otp_too_many_attempts"
    /// 413: the request body is too large.
    case payloadTooLarge = "payload_too_large"
    /// 400: the WebSocket command type is not known.
    case unknownCommand = "unknown_command"
    /// 500: an unexpected failure on the server.
    case internalError = "internal_error"
    /// 426: a WebSocket path was requested without a version-13 upgrade.
    case upgradeRequired = "upgrade_required"
    /// 403: a browser origin that is not on the server's allow-list.
    case originNotAllowed = "origin_not_allowed"
    /// 431: the request head is larger than 8 KiB or has more than 64 fields.
    case headersTooLarge = "headers_too_large"
    /// 501: a request feature the server does not implement (Transfer-Encoding).
    case notImplemented = "not_implemented"
    /// 505: an HTTP version other than 1.0 or 1.1.
    case httpVersionNotSupported = "http_version_not_supported"
    /// 400: a text message over 1,000 characters.
    case messageTooLong = "message_too_long"
    /// 400: an empty text, a malformed meal card, or a kind clients may not send.
    case invalidMessage = "invalid_message"
    /// 409: a thread with a former coach: readable, no longer writable.
    case threadInactive = "thread_inactive"
    /// 410: the resume cursor is older than the retained event log: fetch threads and history again.
    case cursorExpired = "cursor_expired"
    /// 400: the request or command has a field the server does not know (a typo, or a field of another command).
    case unknownField = "unknown_field"
    /// 409: a `client_message_id` already used for a different message in this thread.
    case idempotencyConflict = "idempotency_conflict"
    /// 401: the session was signed out, or revoked after a refresh token was reused: sign in again.
    case sessionRevoked = "session_revoked"
    /// 408: the request head and body did not arrive within the request timeout (10 s).
    case requestTimeout = "request_timeout"
    /// 429: too many sign-ins and sign-ups are being checked at once (password hashing is full); retry after `retry_after`.
    case serverBusy = "server_busy"
    /// 404: no session with this id among yours.
    case sessionNotFound = "session_not_found"
    /// 409: the action is not one you may take in the session's status (the message's field names the action).
    case sessionActionNotAllowed = "session_action_not_allowed"
    /// 409: a client's join before the coach has started the session.
    case waitingForCoach = "waiting_for_coach"
    /// 409: the time overlaps another session of the coach or the client.
    case sessionConflict = "session_conflict"
    /// 409: a client's session time outside their coach's availability (hours, days off, minimum notice).
    case outsideAvailability = "outside_availability"
    /// 400: a session start that is not in the future.
    case startInPast = "start_in_past"
    /// 400: a session duration other than 15–60 minutes in 5-minute steps.
    case invalidDuration = "invalid_duration"
    /// 400: a session purpose that is empty or longer than 200 characters.
    case invalidPurpose = "invalid_purpose"
    /// 409: a join before the join window opens (10 minutes before the start) or after the session's end.
    case outsideJoinWindow = "outside_join_window"
    /// 429: a client's monthly allowance (messages, video calls) is used up (`--tiers`). The message names what
    /// the next tier gives; `upgrade_to` names that tier.
    case quotaExceeded = "quota_exceeded"
    /// 415: an upload that is not a JPEG or PNG image or a PDF, read from its first bytes (not its name).
    case unsupportedAttachment = "unsupported_attachment"
    /// 422: a JPEG or PNG whose header says more than 40 megapixels or more than 30 000 pixels a side (issue 30:
    /// thumbnails; a decompression bomb is refused before it is decoded or kept).
    case imageTooLarge = "image_too_large"
    /// 403: a feature the client's tier does not include (`--tiers`: attachments are Smart Premium's);
    /// `upgrade_to` names the tier that does. (`upgrade_required` is the WebSocket handshake's 426.)
    case planUpgradeRequired = "plan_upgrade_required"
    /// 404: no challenge or check-in with this id in the coaching record you may see.
    case recordNotFound = "record_not_found"
    /// 409: a challenge task checked off before its day, or unchecked on another day than the one it was checked.
    case taskNotAllowed = "task_not_allowed"
    /// 409: a body measurement less than 7 days after the last one; `retry_after` says when the next is allowed.
    case measurementTooSoon = "measurement_too_soon"
    /// 400: a cutting goal below a safe body fat (8 % for men, 15 % for women).
    case unsafeGoal = "unsafe_goal"
    /// 409: `goal.set` while a goal is active, without `replace: true` (seed 004 US3: one active goal).
    case goalActive = "goal_active"
    /// 503: the server cannot store changes right now (its database failed a write or is out of reach); nothing of
    /// this command was saved. Retry after `retry_after` with the same `client_message_id`. Also an upload
    /// refused from its head while other uploads hold the server's bound on upload bytes in flight.
    case unavailable = "unavailable"

    // Issue 26 (sessions under attack).
    /// 409: a coach and client already have 20 open sessions (pending or upcoming); one must end first.
    case tooManySessions = "too_many_sessions"

    // Issue 28 (push devices).
    /// 400: an APNs token that is not 64–200 hex digits, or an FCM token that is empty, over 2,048 bytes, or holds
    /// anything but printable ASCII.
    case invalidDeviceToken = "invalid_device_token"
    /// 400: a Web Push subscription whose `p256dh` is not a P-256 public key (65 bytes, uncompressed, on the curve) or
    /// whose `auth` is not 16 bytes, each in base64url.
    case invalidPushKeys = "invalid_push_keys"
    /// 400: a Web Push endpoint that is not an `https://` URL of at most 2,048 bytes naming a host.
    case invalidPushEndpoint = "invalid_push_endpoint"
    /// 404: `GET /v1/push/vapid-public-key` on a server started without a VAPID key: it sends no Web Push, so a
    /// browser has nothing to subscribe with.
    case pushNotConfigured = "push_not_configured"
    /// 409: a message its sender may not change: someone else's, a service's, a session's system message, or an
    /// edit of anything but a text.
    case messageNotChangeable = "message_not_changeable"
    /// 409: an edit after `--edit-window` (default 24 hours) from the send; the message can still be deleted.
    case editWindowClosed = "edit_window_closed"
    /// 409: an edit of a deleted message.
    case messageDeleted = "message_deleted"
    // Issue 29 (erasing an account).
    /// 409: a coach's erasure while clients are linked to them; `linked_clients` says how many. The clients must be
    /// handed to another coach (an admin approves their change requests) before the coach's account can go.
    case coachHasClients = "coach_has_clients"

    // Issue 29 (outbound webhooks, tier changes from billing).
    /// 400: a webhook URL that is not `https://` (outside `--development`), is over 2,048 bytes, holds a user part,
    /// a fragment, spaces or control characters, or names no valid host or port.
    case invalidWebhookURL = "invalid_webhook_url"
    /// 400: webhook events with a name the server does not know, or one named twice.
    case invalidWebhookEvents = "invalid_webhook_events"
    /// 409: the server already has 50 webhook endpoints; delete one first.
    case tooManyWebhooks = "too_many_webhooks"
    /// 403: a valid API key without the scope this endpoint needs (`tier` for `PUT /v1/services/users/{id}/tier`).
    case apiKeyScopeMissing = "api_key_scope_missing"
    /// 422: an `Idempotency-Key` already used with a different request body.
    case idempotencyKeyReused = "idempotency_key_reused"
    // Issue 30 (group challenges).
    /// 400: a group challenge (one with a `template_id`) lasts 7, 14 or 30 days.
    case challengeLength = "challenge_length"
    /// 409: the client is already in an open (pending or active) challenge of this template.
    case challengeAlreadyJoined = "challenge_already_joined"
    /// 409: the challenge is over for this client (completed, ended or left): it can't be left or checked now.
    case challengeOver = "challenge_over"

    // Issue 30 item 11 (Sign in with Apple and Google).
    /// 401: an ID token that is malformed, over 8 KiB, not RS256, signed by a key the provider does not publish,
    /// tampered with, from another issuer or for another app, or whose nonce is not the request's. `field` says
    /// `id_token`, or `nonce`; nothing more is said about which check failed.
    case invalidIDToken = "invalid_id_token"
    /// 401: the ID token has expired (or says it was issued in the future): get a fresh one from the provider.
    case idTokenExpired = "id_token_expired"
    /// 404: sign-in with a provider this server was not started for (`--apple-audience`, `--google-audience`).
    case signInProviderDisabled = "sign_in_provider_disabled"
    /// 503: the provider's keys could not be fetched (a refetch after a failure waits `retry_after` seconds).
    case identityKeysUnavailable = "identity_keys_unavailable"

    /// The HTTP status for this error (also meaningful for WebSocket replies, which carry it as a hint).
    public var httpStatus: Int { Self.entry(self).status }

    /// The message for people in `language`: English, or Modern Standard Arabic. Never empty.
    public func message(_ language: Language) -> String {
        let entry = Self.entry(self)
        switch language {
        case .english: return entry.english
        case .arabic: return entry.arabic
        }
    }

    /// The one table: status, English message, Arabic message.
    private static func entry(_ code: ErrorCode) -> (status: Int, english: String, arabic: String) {
        switch code {
        case .badRequest:
            return (400, "The request is not valid. Check the data you sent and try again.",
                    "الطلب غير صالح. تحقق من البيانات المرسلة وحاول مرة أخرى.")
        case .missingField:
            return (400, "A required field is missing.",
                    "أحد الحقول المطلوبة غير موجود.")
        case .invalidEmail:
            return (400, "Enter a valid email address, such as name@example.com.",
                    "أدخل عنوان بريد إلكتروني صحيحًا، مثل name@example.com.")
        case .invalidName:
            return (400, "Enter your full name (up to 100 characters).",
                    "أدخل اسمك الكامل (بحد أقصى 100 حرف).")
        case .passwordTooShort:
            return (400, "The password must be at least 6 characters long.",
                    "يجب أن تتكون كلمة المرور من 6 أحرف على الأقل.")
        case .passwordMismatch:
            return (400, "The passwords do not match.",
                    "كلمتا المرور غير متطابقتين.")
        case .invalidRole:
            return (400, "Choose whether you are a client or a coach.",
                    "اختر نوع حسابك: متدرب أو مدرب.")
        case .invalidPhone:
            return (400, "Enter a valid Saudi mobile number, such as +966 5X XXX XXXX.",
                    "أدخل رقم جوال سعوديًا صحيحًا، مثل +966 5X XXX XXXX.")
        case .invalidTimeZone:
            return (400, "Choose a time zone by its name, such as Asia/Riyadh, or UTC.",
                    "اختر المنطقة الزمنية باسمها، مثل Asia/Riyadh، أو UTC.")
        case .outOfRange:
            return (400, "This value is outside the allowed range.",
                    "هذه القيمة خارج النطاق المسموح به.")
        case .emailTaken:
            return (409, "An account with this email address already exists.",
                    "يوجد حساب مسجل بهذا البريد الإلكتروني بالفعل.")
        case .invalidCredentials:
            return (401, "The email address or password is incorrect.",
                    "البريد الإلكتروني أو كلمة المرور غير صحيحة.")
        case .unauthorized:
            return (401, "Please sign in to continue.",
                    "يرجى تسجيل الدخول للمتابعة.")
        case .tokenExpired:
            return (401, "Your access token has expired. Refresh it with your refresh token, or sign in again.",
                    "انتهت صلاحية رمز الدخول. جدّده باستخدام رمز التحديث، أو سجّل الدخول مرة أخرى.")
        case .refreshTokenInvalid:
            return (401, "Your session is no longer valid. Please sign in again.",
                    "لم تعد جلستك صالحة. يرجى تسجيل الدخول من جديد.")
        case .refreshTokenReused:
            return (401, "For your security, this session has been ended on all devices. Please sign in again.",
                    "حفاظًا على أمان حسابك، أُنهيت هذه الجلسة على جميع الأجهزة. يرجى تسجيل الدخول مرة أخرى.")
        case .forbidden:
            return (403, "You do not have permission to do this.",
                    "ليست لديك صلاحية للقيام بهذا الإجراء.")
        case .notFound:
            return (404, "The requested item was not found.",
                    "العنصر المطلوب غير موجود.")
        case .methodNotAllowed:
            return (405, "This method is not allowed for this address.",
                    "طريقة الطلب هذه غير مسموح بها لهذا العنوان.")
        case .conflict:
            return (409, "This request conflicts with the current data. Refresh and try again.",
                    "يتعارض هذا الطلب مع البيانات الحالية. حدّث الصفحة وحاول مرة أخرى.")
        case .coachAlreadyAssigned:
            return (409, "You already have a coach. You can request a coach change instead.",
                    "لديك مدرب بالفعل. يمكنك تقديم طلب لتغيير المدرب بدلًا من ذلك.")
        case .noCoachAssigned:
            return (409, "You do not have a coach yet.",
                    "لم يُعيَّن لك مدرب بعد.")
        case .coachChangePending:
            return (409, "You already have a coach change request under review.",
                    "لديك طلب لتغيير المدرب قيد المراجعة بالفعل.")
        case .coachNotFound:
            return (404, "This coach was not found.",
                    "لم يتم العثور على هذا المدرب.")
        case .requestNotPending:
            return (409, "A decision has already been made on this request.",
                    "سبق البت في هذا الطلب.")
        case .rateLimited:
            return (429, "Too many attempts. Please try again later.",
                    "عدد المحاولات كبير جدًا. يرجى المحاولة لاحقًا.")
        case .otpResendTooSoon:
            return (429, "Please wait a moment before requesting a new code.",
                    "يرجى الانتظار قليلًا قبل طلب رمز جديد.")
        case .otpInvalid:
            return (400, "The verification code is incorrect.",
                    "رمز التحقق غير صحيح.")
        case .otpExpired:
            return (400, "The verification code has expired. Request a new code.",
                    "انتهت صلاحية رمز التحقق. اطلب رمزًا جديدًا.")
        case .otpTooManyAttempts:
            return (429, "Too many incorrect codes. Request a new code.",
                    "أدخلت رموزًا غير صحيحة مرات كثيرة. اطلب رمزًا جديدًا.")
        case .payloadTooLarge:
            return (413, "The request is too large.",
                    "حجم الطلب أكبر من المسموح به.")
        case .unknownCommand:
            return (400, "This command is not recognized.",
                    "هذا الأمر غير معروف.")
        case .internalError:
            return (500, "Something went wrong on our side. Please try again.",
                    "حدث خطأ غير متوقع في الخادم. يرجى المحاولة مرة أخرى.")
        case .upgradeRequired:
            return (426, "This address accepts WebSocket connections (version 13) only.",
                    "هذا العنوان يقبل اتصالات WebSocket (الإصدار 13) فقط.")
        case .originNotAllowed:
            return (403, "Connections from this website are not allowed.",
                    "الاتصال من هذا الموقع غير مسموح به.")
        case .headersTooLarge:
            return (431, "The request headers are too large.",
                    "ترويسات الطلب أكبر من المسموح به.")
        case .notImplemented:
            return (501, "The server does not support this request format.",
                    "الخادم لا يدعم صيغة هذا الطلب.")
        case .httpVersionNotSupported:
            return (505, "Use HTTP/1.1.",
                    "استخدم HTTP/1.1.")
        case .messageTooLong:
            return (400, "Messages can be at most 1,000 characters long.",
                    "يجب ألا يزيد طول الرسالة على 1000 حرف.")
        case .invalidMessage:
            return (400, "This message cannot be sent. Check its content and try again.",
                    "لا يمكن إرسال هذه الرسالة. تحقق من محتواها وحاول مرة أخرى.")
        case .sessionNotFound:
            return (404, "This session does not exist, or it is not yours.",
                    "هذه الجلسة غير موجودة، أو أنها ليست لك.")
        case .sessionActionNotAllowed:
            return (409, "This can't be done to the session in its current state. Refresh it to see what you can do.",
                    "لا يمكن تنفيذ هذا الإجراء على الجلسة في حالتها الحالية. حدّثها لترى ما يمكنك فعله.")
        case .waitingForCoach:
            return (409, "Waiting for coach to start the session…",
                    "بانتظار أن يبدأ المدرب الجلسة…")
        case .sessionConflict:
            return (409, "This time overlaps another session. Choose another time.",
                    "يتعارض هذا الموعد مع جلسة أخرى. اختر موعدًا آخر.")
        case .outsideAvailability:
            return (409, "This time is outside your coach's available hours. Choose one of the free times.",
                    "هذا الموعد خارج ساعات توفر مدربك. اختر أحد الأوقات المتاحة.")
        case .startInPast:
            return (400, "Choose a start time in the future.",
                    "اختر وقت بدء في المستقبل.")
        case .invalidDuration:
            return (400, "A session lasts 15 to 60 minutes, in steps of 5 minutes.",
                    "تستمر الجلسة من 15 إلى 60 دقيقة، بخطوات من 5 دقائق.")
        case .invalidPurpose:
            return (400, "Describe the session's purpose in 1 to 200 characters.",
                    "صف هدف الجلسة في 1 إلى 200 حرف.")
        case .unsupportedAttachment:
            return (415, "Attach a JPEG or PNG image (up to 5 MB) or a PDF (up to 10 MB).",
                    "أرفق صورة بصيغة JPEG أو PNG (حتى 5 ميغابايت) أو ملف PDF (حتى 10 ميغابايت).")
        case .imageTooLarge:
            return (422, "This image has too many pixels. Send one of at most 40 megapixels and 30,000 pixels a side.",
                    "تحتوي هذه الصورة على عدد كبير جدًا من البكسلات. أرسل صورة لا تتجاوز 40 ميغابكسل و30,000 بكسل في كل ضلع.")
        case .planUpgradeRequired:
            return (403, "Upgrade to Smart Premium for attachments.",
                    "رقِّ إلى Smart Premium لإرفاق الملفات.")
        case .quotaExceeded:
            return (429, "You have used this month's allowance. Upgrade your plan for more.",
                    "استهلكت رصيدك لهذا الشهر. رقِّ اشتراكك للحصول على المزيد.")
        case .recordNotFound:
            return (404, "This item of the coaching record does not exist, or it is not yours to see.",
                    "هذا العنصر من سجل التدريب غير موجود، أو لا يحق لك الاطلاع عليه.")
        case .taskNotAllowed:
            return (409, "A task can be checked off from its day on, and unchecked only on the day it was checked.",
                    "يمكن إنجاز المهمة ابتداءً من يومها، ولا يمكن إلغاء إنجازها إلا في اليوم نفسه الذي أُنجزت فيه.")
        case .measurementTooSoon:
            return (409, "Measurements are taken at least 7 days apart. Try again when the week is over.",
                    "تُسجَّل القياسات بفاصل 7 أيام على الأقل. حاول مجددًا بعد انقضاء الأسبوع.")
        case .unsafeGoal:
            return (400, "This goal is below a safe body fat (8% for men, 15% for women). Choose a higher target.",
                    "هذا الهدف أقل من نسبة الدهون الآمنة (8% للرجال و15% للنساء). اختر هدفًا أعلى.")
        case .goalActive:
            return (409, "You already have an active goal. Only one goal can be active: replace it to start this one.",
                    "لديك هدف نشط بالفعل. يمكن أن يكون هدف واحد فقط نشطًا: استبدله لتبدأ هذا الهدف.")
        case .tooManySessions:
            return (409, "You already have 20 open sessions together. Cancel or finish one before adding another.",
                    "لديكما بالفعل 20 جلسة مفتوحة. ألغِ جلسة أو أنهِها قبل إضافة أخرى.")
        case .unavailable:
            return (503, "The service can't save this right now. Nothing was saved; please try again in a moment.",
                    "تعذّر على الخدمة حفظ هذا الآن. لم يُحفظ شيء؛ يرجى المحاولة مرة أخرى بعد قليل.")
        case .outsideJoinWindow:
            return (409, "You can join from 10 minutes before the session starts until it ends.",
                    "يمكنك الانضمام قبل بدء الجلسة بعشر دقائق وحتى نهايتها.")
        case .threadInactive:
            return (409, "This conversation is closed: the coaching relationship it belongs to has ended. Its history stays readable.",
                    "هذه المحادثة مغلقة: انتهت علاقة التدريب التي تخصها. يبقى سجلها متاحًا للقراءة.")
        case .cursorExpired:
            return (410, "You were away too long to catch up. Reload your conversations and their history.",
                    "غبت مدة طويلة لا يمكن معها استكمال ما فاتك. أعد تحميل المحادثات وسجلها.")
        case .unknownField:
            return (400, "The request contains a field that is not recognized.",
                    "يحتوي الطلب على حقل غير معروف.")
        case .idempotencyConflict:
            return (409, "This message id was already used for a different message. Use a new id for a new message.",
                    "سبق استخدام معرّف الرسالة هذا لرسالة مختلفة. استخدم معرّفًا جديدًا للرسالة الجديدة.")
        case .sessionRevoked:
            return (401, "This session has ended (you signed out, or it was ended for your security). Please sign in again.",
                    "انتهت هذه الجلسة (سجّلت الخروج، أو أُنهيت حفاظًا على أمانك). يرجى تسجيل الدخول مرة أخرى.")
        case .requestTimeout:
            return (408, "The request took too long to arrive. Please try again.",
                    "استغرق وصول الطلب وقتًا طويلًا. يرجى المحاولة مرة أخرى.")
        case .serverBusy:
            return (429, "The server is busy. Please try again in a moment.",
                    "الخادم مشغول حاليًا. يرجى المحاولة بعد قليل.")
        case .invalidDeviceToken:
            return (400, "This push token is not valid. Register the token your app received from Apple or Firebase.",
                    "رمز الإشعارات هذا غير صالح. سجّل الرمز الذي تلقاه تطبيقك من Apple أو Firebase.")
        case .invalidPushKeys:
            return (400, "The keys of this push subscription are not valid. Subscribe again and send the subscription as the browser gives it.",
                    "مفاتيح اشتراك الإشعارات هذا غير صالحة. اشترك من جديد وأرسل الاشتراك كما يقدّمه المتصفح.")
        case .invalidPushEndpoint:
            return (400, "The push endpoint must be an https:// address of at most 2,048 bytes.",
                    "يجب أن يكون عنوان الإشعارات عنوان https:// لا يتجاوز 2048 بايت.")
        case .pushNotConfigured:
            return (404, "This server does not send browser notifications.",
                    "لا يرسل هذا الخادم إشعارات إلى المتصفح.")
        case .invalidWebhookURL:
            return (400, "The webhook URL must be an https:// address of at most 2,048 bytes, without a user name or fragment.",
                    "يجب أن يكون عنوان الـ webhook عنوان https:// لا يتجاوز 2048 بايت، دون اسم مستخدم أو جزء بعد #.")
        case .invalidWebhookEvents:
            return (400, "Choose one or more known webhook events, each named once.",
                    "اختر حدثًا معروفًا واحدًا أو أكثر للـ webhook، مع ذكر كل حدث مرة واحدة.")
        case .tooManyWebhooks:
            return (409, "This server already has 50 webhook endpoints. Delete one before adding another.",
                    "لدى هذا الخادم 50 عنوان webhook بالفعل. احذف أحدها قبل إضافة آخر.")
        case .apiKeyScopeMissing:
            return (403, "This API key is not allowed to do this. Ask an admin for a key with the needed scope.",
                    "مفتاح الـ API هذا غير مسموح له بهذا الإجراء. اطلب من المسؤول مفتاحًا بالصلاحية اللازمة.")
        case .idempotencyKeyReused:
            return (422, "This Idempotency-Key was already used for a different request. Use a new key for a new request.",
                    "سبق استخدام مفتاح Idempotency-Key هذا لطلب مختلف. استخدم مفتاحًا جديدًا للطلب الجديد.")
        case .challengeLength:
            return (400, "A group challenge lasts 7, 14 or 30 days.",
                    "يستمر التحدي الجماعي 7 أو 14 أو 30 يومًا.")
        case .challengeAlreadyJoined:
            return (409, "You are already in this challenge.",
                    "أنت مشترك في هذا التحدي بالفعل.")
        case .challengeOver:
            return (409, "This challenge is over for you: it was completed, it ended or you left it.",
                    "انتهى هذا التحدي بالنسبة لك: أُكمل أو انتهت مدته أو غادرته.")
        case .messageNotChangeable:
            return (409, "Only the person who sent a message can change it, and only a text message can be edited.",
                    "لا يغيّر الرسالة إلا من أرسلها، ولا يُعدَّل إلا النص.")
        case .editWindowClosed:
            return (409, "The time to edit this message has passed. You can still delete it.",
                    "انتهت مدة تعديل هذه الرسالة. لا يزال بإمكانك حذفها.")
        case .messageDeleted:
            return (409, "This message was deleted.",
                    "حُذفت هذه الرسالة.")
        case .coachHasClients:
            return (409, "Clients are still linked to this coach. Hand them to another coach or end the links first, then delete the account.",
                    "لا يزال عملاء مرتبطين بهذا المدرب. انقلهم إلى مدرب آخر أو أنهِ الارتباط بهم أولًا، ثم احذف الحساب.")
        case .invalidIDToken:
            return (401, "We could not sign you in with this account. Please try again.",
                    "تعذّر تسجيل دخولك بهذا الحساب. يرجى المحاولة مرة أخرى.")
        case .idTokenExpired:
            return (401, "Your sign-in has expired. Please sign in again.",
                    "انتهت صلاحية تسجيل الدخول. يرجى تسجيل الدخول مرة أخرى.")
        case .signInProviderDisabled:
            return (404, "Signing in with this provider is not available.",
                    "تسجيل الدخول عبر هذا المزوّد غير متاح.")
        case .identityKeysUnavailable:
            return (503, "Signing in with this provider is unavailable right now. Please try again shortly.",
                    "تسجيل الدخول عبر هذا المزوّد غير متاح حاليًا. يرجى المحاولة بعد قليل.")
        }
    }
}
