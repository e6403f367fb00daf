# The per-thread chain that can replace the log's `log_thread` index (issue 33; LoadTests/README.md "Issue 33 item: the
# per-thread index", session 42): a reference of its schema, its "v30-thread-chain" conversion of an existing log, its
# writer and its readers, on Python's sqlite3, checked against plain scans of random logs. Not the server's code: the
# specification the Swift store follows, runnable. Run: python3 LoadTests/thread-chain.py [rounds] (a few seconds).
#
# - `log.prev`: the position of the thread's previous record (0: the first); `log.ord`: the record's number in its
#   thread (1, 2, …). Rows are never deleted (an edit, a delete, an erasure and the purge rewrite them), so a chain,
#   once written, stays whole.
# - `logMark(threadNo, pos, seq)` WITHOUT ROWID: every MARK'th record of each thread (ord % MARK = 0). Seq and pos
#   both never decrease along a thread, so the first mark after a position or a seq bounds a backward walk to MARK.
# - `logTail(threadNo, pos)` WITHOUT ROWID and `logCheckpoint.tailsThrough`: each thread's last position as of
#   `tailsThrough`, saved by the checkpoint (once a second, not by every append). A thread's last position is then
#   max(its logTail row, its newest row after tailsThrough): a scan of the records since the last save.
# - The writer keeps every thread's last position in memory and checks it against the row it names (a rowid
#   lookup: the row must exist and be of that thread) before linking to it, so a rolled-back append cannot leave
#   a chain pointing at nothing; on a mismatch it reads the thread's last position again from the store.
import sqlite3, random, sys

MARK = 64
COLS = 'pos, kind, threadNo, side, seq, a, b, ref, body, at'
MESSAGE, RECEIPT, SESSION, CHANGE = 0, 1, 3, 7

OLD_SCHEMA = '''
CREATE TABLE log (pos INTEGER PRIMARY KEY, kind INTEGER NOT NULL, threadNo INTEGER NOT NULL, side INTEGER NOT NULL,
  seq INTEGER NOT NULL, a INTEGER NOT NULL DEFAULT 0, b INTEGER NOT NULL DEFAULT 0, ref TEXT, body TEXT, at INTEGER NOT NULL);
CREATE INDEX log_thread ON log(threadNo, seq);
CREATE TABLE logCheckpoint (id INTEGER PRIMARY KEY CHECK (id = 1), pos INTEGER NOT NULL, resumeFloor INTEGER NOT NULL);
INSERT INTO logCheckpoint VALUES (1, 0, 0);
'''

# "v30-thread-chain": one transaction; the placeholder row (kind -1) of a v5 database is on no chain.
V30 = f'''
ALTER TABLE log ADD COLUMN prev INTEGER NOT NULL DEFAULT 0;
ALTER TABLE log ADD COLUMN ord INTEGER NOT NULL DEFAULT 0;
UPDATE log SET prev = w.prev, ord = w.ord
FROM (SELECT pos, COALESCE(LAG(pos) OVER t, 0) AS prev, ROW_NUMBER() OVER t AS ord FROM log WHERE kind <> -1
      WINDOW t AS (PARTITION BY threadNo ORDER BY pos)) AS w
WHERE log.pos = w.pos;
CREATE TABLE logMark (threadNo INTEGER NOT NULL, pos INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (threadNo, pos)) WITHOUT ROWID;
INSERT INTO logMark SELECT threadNo, pos, seq FROM log WHERE kind <> -1 AND ord % {MARK} = 0;
CREATE TABLE logTail (threadNo INTEGER PRIMARY KEY, pos INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO logTail SELECT threadNo, MAX(pos) FROM log WHERE kind <> -1 GROUP BY threadNo;
ALTER TABLE logCheckpoint ADD COLUMN tailsThrough INTEGER NOT NULL DEFAULT 0;
UPDATE logCheckpoint SET tailsThrough = (SELECT COALESCE(MAX(pos), 0) FROM log);
DROP INDEX log_thread;
'''


def stored_tails(db):
    """Every thread's last position from the store (a start; the writer after a mismatch)."""
    tails = dict(db.execute('SELECT threadNo, pos FROM logTail'))
    through = db.execute('SELECT tailsThrough FROM logCheckpoint').fetchone()[0]
    for no, pos in db.execute('SELECT threadNo, MAX(pos) FROM log WHERE pos > ? AND kind <> -1 GROUP BY threadNo', (through,)):
        tails[no] = max(tails.get(no, 0), pos)
    return tails


def save_tails(db):
    """The checkpoint's part: the tails of the threads written since the last save, and the position they include."""
    through = db.execute('SELECT tailsThrough FROM logCheckpoint').fetchone()[0]
    newest = db.execute('SELECT COALESCE(MAX(pos), 0) FROM log').fetchone()[0]
    db.execute('''INSERT INTO logTail SELECT threadNo, MAX(pos) FROM log WHERE pos > ? AND kind <> -1 GROUP BY threadNo
                  ON CONFLICT(threadNo) DO UPDATE SET pos = max(pos, excluded.pos)''', (through,))
    db.execute('UPDATE logCheckpoint SET tailsThrough = ?', (newest,))


class Writer:
    def __init__(self, db):
        self.db = db
        self.tails = stored_tails(db)
        # What readers use: positions published once their transaction committed (never a rolled-back one).
        self.published = dict(self.tails)
        self.pending = set()

    def committed(self):
        for no in self.pending:
            self.published[no] = self.tails[no]
        self.pending = set()

    def rolled_back(self):
        # The working map keeps the lost positions on purpose: `link` must notice them.
        self.pending = set()

    def link(self, no):
        """(prev, ord) for the thread's next record, the remembered last position checked against its row."""
        tail = self.tails.get(no, 0)
        if tail:
            row = self.db.execute('SELECT threadNo, ord FROM log WHERE pos = ?', (tail,)).fetchone()
            if row is None or row[0] != no:
                self.tails = stored_tails(self.db)
                tail = self.tails.get(no, 0)
                row = self.db.execute('SELECT threadNo, ord FROM log WHERE pos = ?', (tail,)).fetchone() if tail else None
            if row:
                return tail, row[1] + 1
        return 0, 1

    def append(self, records):
        """records: (kind, threadNo, side, seq, a, b, ref, body, at); in the caller's transaction."""
        positions = []
        for r in records:
            prev, ord_ = self.link(r[1])
            pos = self.db.execute(f'INSERT INTO log ({COLS[5:]}, prev, ord) VALUES (?,?,?,?,?,?,?,?,?,?,?)', r + (prev, ord_)).lastrowid
            if ord_ % MARK == 0:
                self.db.execute('INSERT INTO logMark VALUES (?, ?, ?)', (r[1], pos, r[3]))
            self.tails[r[1]] = pos
            self.pending.add(r[1])
            positions.append(pos)
        return positions


# --- Readers: each thread's tail comes from the writer's map (committed positions only) ---

def row_at(db, pos):
    return db.execute(f'SELECT {COLS}, prev FROM log WHERE pos = ?', (pos,)).fetchone()


def walk_back(db, start):
    """The thread's records from `start` backward, as (record, prev)."""
    pos = start
    while pos:
        row = row_at(db, pos)
        yield row[:-1]
        pos = row[-1]


def first_mark_after_pos(db, no, pos):
    row = db.execute('SELECT pos FROM logMark WHERE threadNo = ? AND pos > ? ORDER BY pos LIMIT 1', (no, pos)).fetchone()
    return row[0] if row else None


def first_mark_with_seq(db, no, seq, tail):
    """The oldest mark whose seq is >= `seq` (None: none): walked from the newest marks, stopping at the first below."""
    found = None
    for pos, mark_seq in db.execute('SELECT pos, seq FROM logMark WHERE threadNo = ? ORDER BY pos DESC', (no,)):
        if mark_seq < seq:
            break
        found = pos
    return found


def is_thread_message(r):
    return r[1] == MESSAGE or (r[1] == SESSION and r[5] == 1)


def history(db, no, tail, before, limit):
    """ChatLog.history: messages with seq < before, newest first."""
    if limit <= 0 or not tail:
        return []
    start = first_mark_with_seq(db, no, before, tail) or tail
    out = []
    for r in walk_back(db, start):
        if r[4] < before and is_thread_message(r):
            out.append(r)
            if len(out) == limit:
                break
    return out


def forward(db, no, tail, after):
    """The thread's records after position `after`, oldest first, lazily: segments between marks, each walked back."""
    lower = after
    while True:
        upper = first_mark_after_pos(db, no, lower)
        start = upper if upper is not None else tail
        if not start or start <= lower:
            return
        segment = []
        for r in walk_back(db, start):
            if r[0] <= lower:
                break
            segment.append(r)
        yield from reversed(segment)
        if upper is None:
            return
        lower = upper


def records(db, nos, tails, after, limit):
    """ChatLog.records(threadNos:after:limit:): merged by position."""
    if limit <= 0:
        return []
    import heapq
    merged = heapq.merge(*[forward(db, no, tails.get(no, 0), after) for no in nos], key=lambda r: r[0])
    out = []
    for r in merged:
        out.append(r)
        if len(out) == limit:
            break
    return out


def message(db, no, tail, seq):
    """ChatLog.message(threadNo:seq:) and MessageForgetting's target."""
    if not tail:
        return None
    start = first_mark_with_seq(db, no, seq + 1, tail) if seq < 2**63 - 1 else None
    for r in walk_back(db, start or tail):
        if r[4] < seq:
            return None
        if r[4] == seq and r[1] == MESSAGE:
            return r
    return None


def recent(db, no, tail, limit):
    out = []
    for r in walk_back(db, tail):
        if len(out) == limit:
            break
        if r[1] == MESSAGE:
            out.append((r[3], r[7], r[4]))
    return out


# The thread's rows with pos >= lower, as one SQL condition: how the statements that the two engines share
# (`MessageForgetting`: an edit's target and its older changes, the files a deleted message named, an erasure's
# rewrite of a thread) can say "rows of this thread" on SQLite without `log_thread`; PostgreSQL keeps `threadNo = ?`.
# Arguments: the thread's last position (or any record of it to walk back from), then the lower bound.
IN_THREAD = '''pos IN (WITH RECURSIVE c(p, lo) AS (SELECT ?, ? UNION ALL SELECT l.prev, c.lo FROM log l JOIN c ON l.pos = c.p
                                                  WHERE l.prev > 0 AND l.prev >= c.lo) SELECT p FROM c WHERE p > 0 AND p >= lo)'''


# --- The check ---

def random_log(rng, db, writer, threads, n, gaps, seqs=None):
    seqs = {} if seqs is None else seqs
    for _ in range(n):
        no = rng.choice(threads)
        s = seqs.get(no, 0)
        kind = rng.choice([MESSAGE, MESSAGE, MESSAGE, RECEIPT, SESSION, CHANGE])
        a = rng.choice([0, 1]) if kind == SESSION else (rng.choice([0, 1, 2]) if kind == MESSAGE else (rng.randint(0, s) if kind == CHANGE else 0))
        if kind == MESSAGE or (kind == SESSION and a == 1):  # a thread message has its own seq
            s += rng.choice([1, 1, 1, 2, 5]) if gaps else 1
        seqs[no] = s
        rec = (kind, no, rng.randint(0, 1), s, a, 0, f'r{rng.random():.6f}', 'x' * rng.randint(0, 40), 1700000000 + rng.randint(0, 99))
        if writer:
            db.execute('BEGIN'); writer.append([rec]); db.execute('COMMIT'); writer.committed()
        else:
            db.execute(f'INSERT INTO log ({COLS[5:]}) VALUES (?,?,?,?,?,?,?,?,?)', rec)
    return seqs


def check(db, tails, threads, seqs, rng):
    edges = [0, 1, -2**63, 2**63 - 1, -1]
    for no in threads + [999]:  # 999: a thread with no records
        tail = tails.get(no, 0)
        top = seqs.get(no, 0)
        for before in edges + [top, top + 1, top - 1, rng.randint(0, top + 2), rng.randint(0, top + 2)]:
            for limit in (0, 1, 50):
                want = db.execute(f'''SELECT {COLS} FROM log WHERE threadNo = ? AND seq < ? AND (kind = 0 OR (kind = 3 AND a = 1))
                                      ORDER BY seq DESC, pos DESC LIMIT ?''', (no, before, limit)).fetchall()
                got = history(db, no, tail, before, limit)
                assert got == want, ('history', no, before, limit)
        for seq in edges + [top, top + 1, rng.randint(0, top + 1)]:
            want = db.execute(f'SELECT {COLS} FROM log WHERE threadNo = ? AND seq = ? AND kind = 0', (no, seq)).fetchone()
            assert message(db, no, tail, seq) == want, ('message', no, seq)
        for limit in (0, 1, 7, 500):
            want = db.execute('SELECT side, ref, seq FROM log WHERE threadNo = ? AND kind = 0 ORDER BY seq DESC, pos DESC LIMIT ?', (no, limit)).fetchall()
            assert recent(db, no, tail, limit) == want, ('recent', no, limit)
        want = db.execute('SELECT COALESCE(MAX(pos), 0) FROM log WHERE threadNo = ? AND kind <> -1', (no,)).fetchone()[0]
        assert tail == want, ('tail', no, tail, want)
        for lower in edges[:3] + [tail, tail + 1, rng.randint(0, tail + 1)]:
            want = db.execute('SELECT pos FROM log WHERE threadNo = ? AND kind <> -1 AND pos >= ? ORDER BY pos', (no, lower)).fetchall()
            got = db.execute(f'SELECT pos FROM log WHERE {IN_THREAD} ORDER BY pos', (tail, lower)).fetchall()
            assert got == want, ('in-thread', no, lower)
            # as MessageForgetting's change records of a target (a = target) older than the newest record
            target = rng.randint(0, top + 1)
            want = db.execute('SELECT pos FROM log WHERE threadNo = ? AND seq >= ? AND kind = 7 AND a = ? AND pos < ? ORDER BY pos',
                              (no, target, target, tail)).fetchall()
            got = db.execute(f'SELECT pos FROM log WHERE {IN_THREAD} AND seq >= ? AND kind = 7 AND a = ? AND pos < ? ORDER BY pos',
                             (tail, 0, target, target, tail)).fetchall()
            assert got == want, ('changes', no, target)
    newest = db.execute('SELECT MAX(pos) FROM log').fetchone()[0]
    for _ in range(6):
        nos = rng.sample(threads, rng.randint(1, len(threads))) + [999]
        for after in edges + [newest, newest - 1, rng.randint(0, newest), rng.randint(0, newest)]:
            for limit in (0, 1, 200, 10**6):
                marks = ','.join('?' * len(nos))
                want = db.execute(f'SELECT {COLS} FROM log WHERE threadNo IN ({marks}) AND pos > ? AND kind <> -1 ORDER BY pos LIMIT ?',
                                  nos + [after, limit]).fetchall()
                assert records(db, nos, tails, after, limit) == want, ('records', after, limit)


def main(rounds):
    rng = random.Random(42)
    for round_ in range(rounds):
        threads = rng.sample(range(0, 40), rng.randint(1, 8))
        n = rng.choice([0, 1, 63, 64, 65, 300, 3000])
        gaps = rng.random() < 0.5
        # 1. A log written with the old schema (with a v5 placeholder row), converted by "v30-thread-chain".
        old = sqlite3.connect(':memory:', isolation_level=None)
        old.executescript(OLD_SCHEMA)
        if rng.random() < 0.5:
            old.execute('INSERT INTO log (pos, kind, threadNo, side, seq, at) VALUES (1000, -1, 0, 0, 0, 0)')
        seqs = random_log(rng, old, None, threads, n, gaps)
        before = old.execute(f'SELECT {COLS} FROM log ORDER BY pos').fetchall()
        old.executescript('BEGIN;' + V30 + 'COMMIT;')
        assert old.execute(f'SELECT {COLS} FROM log ORDER BY pos').fetchall() == before, 'the conversion changed a record'
        assert old.execute("SELECT COUNT(*) FROM sqlite_master WHERE name = 'log_thread'").fetchone()[0] == 0
        # 2. More records by the chain's writer, a checkpoint's tail save between, and a start reading the tails.
        writer = Writer(old)
        random_log(rng, old, writer, threads, n // 2, gaps, seqs)
        old.execute('BEGIN'); save_tails(old); old.execute('COMMIT')
        random_log(rng, old, writer, threads, n // 3, gaps, seqs)
        assert stored_tails(old) == writer.tails == writer.published, 'a start reads other tails than the writer holds'
        # 3. A rolled-back append: the writer's map names a position that is gone, then reused by another thread.
        if threads:
            no = threads[0]
            old.execute('BEGIN'); writer.append([(MESSAGE, no, 0, seqs.get(no, 0) + 1, 0, 0, 'lost', '', 0)]); old.execute('ROLLBACK')
            writer.rolled_back()
            other = 12345
            old.execute('BEGIN'); writer.append([(RECEIPT, other, 0, 0, 0, 0, None, None, 0)]); old.execute('COMMIT')
            writer.committed()
            seqs[other] = 0
            threads = threads + [other]
            random_log(rng, old, writer, threads, 20, gaps, seqs)
        # Marks: exactly every MARK'th record of each thread.
        want_marks = old.execute(f'''SELECT threadNo, pos, seq FROM (SELECT threadNo, pos, seq, ROW_NUMBER() OVER (PARTITION BY threadNo ORDER BY pos) AS o
                                     FROM log WHERE kind <> -1) WHERE o % {MARK} = 0 ORDER BY threadNo, pos''').fetchall()
        assert old.execute('SELECT threadNo, pos, seq FROM logMark ORDER BY threadNo, pos').fetchall() == want_marks, 'marks'
        assert stored_tails(old) == writer.published, 'published tails'
        check(old, dict(writer.published), threads, seqs, rng)
    db = sqlite3.connect(':memory:'); db.executescript(OLD_SCHEMA + V30)
    plan = db.execute(f'EXPLAIN QUERY PLAN UPDATE log SET body = NULL WHERE {IN_THREAD} AND kind = 7 AND a = ?', (1, 0, 5)).fetchall()
    assert not any('SCAN log' in row[-1] and 'SCAN l' != row[-1] for row in plan), plan
    print(f'thread-chain: {rounds} random logs, every reader equal to its plain scan')
    print('  the shared statements\' plan on the chain:', '; '.join(row[-1] for row in plan))


main(int(sys.argv[1]) if len(sys.argv) > 1 else 40)
