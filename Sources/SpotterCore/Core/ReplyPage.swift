/// Replies that list what can grow (`sessions`, `record`, `meals`, `history`) come a page at a time, so a reply is
/// never what closes its reader: a connection is closed (1008 "too slow") once `maxOutboundBytes` wait unsent,
/// and a reply of several megabytes would pass that bound while the client is still reading it.
///
/// A page holds at most the command's `limit` items, and fewer when those would make the reply longer than
/// `budget(outbound:)`: then the page is halved until it fits (down to one item, which the inbound bound keeps
/// under 64 KiB). A short page is not the last one; only a null next cursor is.
public enum ReplyPage {
    /// A reply aims for at most a quarter of the outbound bound (256 KiB with the default 1 MiB).
    public static func budget(outbound maxOutboundBytes: Int) -> Int { max(16 * 1024, maxOutboundBytes / 4) }

    /// The reply `make(count)` builds for the first `count` items, with `count` halved from `limit` until the
    /// reply fits `budget` bytes or holds one item.
    public static func fitting(limit: Int, budget: Int, _ make: (Int) -> String) -> String {
        var count = max(1, limit)
        var reply = make(count)
        while reply.utf8.count > budget && count > 1 {
            count /= 2
            reply = make(count)
        }
        return reply
    }
}
