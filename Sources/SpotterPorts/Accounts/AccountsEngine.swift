/// Where the accounts' SQL runs. Writes are transactions (in a server, a savepoint in the one writer's group
/// commit); `afterCommit` runs once the write is durable, in commit order, before `write` returns. Blocking: never
/// call it from the event loop.
public protocol AccountsEngine: Sendable {
    func write<T: Sendable>(_ work: @escaping @Sendable (any SQLDatabase) throws -> T,
                            afterCommit: @escaping @Sendable (T) -> Void) throws -> T
    func read<T>(_ work: (any SQLDatabase) throws -> T) throws -> T
}
