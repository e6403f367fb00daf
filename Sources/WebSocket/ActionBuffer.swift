extension WebSocketSession {
    /// A reusable array for the actions of one `receive`. A socket shell collects the actions first and carries them
    /// out afterwards (carrying them out may send on the connection, which needs the session again); one buffer
    /// serves every connection of a loop, which reads one connection at a time, so a read allocates nothing once
    /// the buffer has grown.
    ///
    /// Not thread-safe: keep it on the loop. A `take` while another buffer is out (a read nested in carrying out
    /// actions) gets a fresh array, and the last one given back is kept.
    public struct ActionBuffer {
        private var spare: [Action] = []
        private let keptCapacity: Int

        /// - Parameter keptCapacity: a buffer given back with more room than this is dropped rather than kept
        ///   (one burst of actions does not pin its memory for the life of the loop).
        public init(keptCapacity: Int = .max) {
            self.keptCapacity = keptCapacity
        }

        /// The spare buffer, empty; return it with `giveBack` once its actions are carried out.
        public mutating func take() -> [Action] {
            var buffer: [Action] = []
            swap(&buffer, &spare)
            return buffer
        }

        /// Runs `bytes` through `session` and returns its actions, in the spare buffer: carry them out in order,
        /// then `giveBack` the array.
        public mutating func collect(_ bytes: UnsafeRawBufferPointer, through session: inout WebSocketSession) -> [Action] {
            var actions = take()
            session.receive(bytes) { actions.append($0) }
            return actions
        }

        public mutating func giveBack(_ buffer: [Action]) {
            var buffer = buffer
            buffer.removeAll(keepingCapacity: buffer.capacity <= keptCapacity)
            spare = buffer
        }
    }
}
