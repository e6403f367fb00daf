import FoundationEssentials
import SpotterProtocol

// How a change record (`MessageChangeRecord`) rewrites the message it names: the one definition the engines follow
// (the in-memory log calls it; SQLite and PostgreSQL run its SQL form, `MessageForgetting`), and the tests compare.

extension MessageRecord {
    /// The message as it stands after `change`, made at `at` (seconds).
    public func applying(_ change: MessageChangeRecord.Change, at: Int64) -> MessageRecord {
        var changed = self
        switch change {
        case .edit(let body, _):
            guard !isDeleted else { return self }  // a deleted message stays deleted
            if let body { changed.body = body }
            changed.editedAt = at
        case .delete:
            changed.body = ""
            changed.hasAttachments = false
            changed.editedAt = nil
            changed.deletedAt = deletedAt ?? at
        }
        return changed
    }

    /// The ids of the files this message carries (an `AttachedText` body); empty for any other.
    public var attachmentIDs: [String] {
        guard hasAttachments, let attached = try? JSONDecoder().decode(AttachedText.self, from: Data(body.utf8)) else { return [] }
        return attached.attachments.map(\.id)
    }
}

extension MessageChangeRecord.Change {
    /// The same change with its text forgotten (a later change of the same message came).
    public var forgotten: MessageChangeRecord.Change {
        if case .edit(_, let attached) = self { return .edit(body: nil, attached: attached) }
        return self
    }
}

/// The events of a change record, as both participants get them (the same JSON for both).
public enum MessageChangeEvents {
    /// `message.edited` or `message.deleted`; nil for an edit whose text was forgotten by a later change, or of a
    /// message known to be deleted (`deleted`): the later record tells what the message now is.
    public static func json(_ change: MessageChangeRecord, threadID: String, at: Int64, deleted: Bool) -> String? {
        switch change.change {
        case .delete(let deleter):
            return JSONText.encoder.encodeToString(
                MessageDeletedEvent(threadId: threadID, seq: change.target, by: deleter.wire, deletedAt: at))
        case .edit(let body?, let attached):
            guard !deleted else { return nil }
            var text = body
            var attachments: [AttachmentView]?
            if attached, let decoded = try? JSONDecoder().decode(AttachedText.self, from: Data(body.utf8)) {
                text = decoded.text
                attachments = decoded.attachments
            }
            return JSONText.encoder.encodeToString(
                MessageEditedEvent(threadId: threadID, seq: change.target, text: text, attachments: attachments, editedAt: at))
        case .edit(nil, _):
            return nil
        }
    }
}
