import SpotterProtocol

/// The live socket's commands by `type`, each to its feature's handler. A frame is decoded once into its typed
/// body (`SocketCommand.decode`, which finds the body type by `type` in `SocketCommand.catalog`); the body's
/// `type` then finds the handler here. Every catalog type has exactly one handler (a test checks).
struct CommandTable: Sendable {
    typealias Handler = @Sendable (AppSocket, any SocketCommandBody, String) -> Void
    private(set) var handlers: [String: Handler] = [:]

    /// Registers `handle` for `C`'s frames; a type registered twice is a programming error.
    mutating func on<C: SocketCommandBody>(_ command: C.Type, _ handle: @escaping @Sendable (AppSocket, C, String) -> Void) {
        precondition(handlers[C.type] == nil, "two handlers for \(C.type)")
        // The body came from the catalog entry for this same type, so the cast cannot fail.
        handlers[C.type] = { socket, body, id in handle(socket, body as! C, id) }
    }

    /// Runs the command's handler; false if no feature handles its type.
    func dispatch(_ command: any SocketCommandBody, id: String, on socket: AppSocket) -> Bool {
        guard let handler = handlers[type(of: command).type] else { return false }
        handler(socket, command, id)
        return true
    }
}

extension AppSocket {
    /// Every feature's commands. Built once, on first use.
    static let commands: CommandTable = {
        var table = CommandTable()
        registerAccountCommands(&table)
        registerMessagingCommands(&table)
        registerSessionCommands(&table)
        registerRatingCommands(&table)
        registerSessionFeedbackCommands(&table)
        registerAvailabilityCommands(&table)
        registerRecordCommands(&table)
        registerDailyCheckInCommands(&table)
        return table
    }()

    /// The socket's own: who am I, and refreshing its token.
    static func registerAccountCommands(_ table: inout CommandTable) {
        table.on(MeCommand.self) { socket, _, id in socket.me(id: id) }
        table.on(RefreshRequest.self) { socket, body, id in socket.refresh(body, id: id) }
        table.on(AppStateCommand.self) { socket, body, id in socket.appState(body, id: id) }
    }
}

/// A command that names the thread it acts on: in a cluster the socket makes sure this process knows the thread
/// before the command runs (`CoreRunner.readThread`).
protocol ThreadScoped {
    var threadId: String? { get }
}

extension SendMessageCommand: ThreadScoped {}
extension MessageEditCommand: ThreadScoped {}
extension MessageDeleteCommand: ThreadScoped {}
extension ReceiptCommand: ThreadScoped {}
extension HistoryCommand: ThreadScoped {}
extension TypingCommand: ThreadScoped {}
extension SessionCreateCommand: ThreadScoped {}
extension RatingSubmitCommand: ThreadScoped {}
extension RatingSkipCommand: ThreadScoped {}
extension ChallengeCreateCommand: ThreadScoped {}
extension CheckInSubmitCommand: ThreadScoped {}
extension MeasurementAddCommand: ThreadScoped {}
extension GoalSetCommand: ThreadScoped {}
extension RecordCommand: ThreadScoped {}
extension MealsCommand: ThreadScoped {}
extension DailyCheckInSubmitCommand: ThreadScoped {}
extension DailyCheckInsCommand: ThreadScoped {}
