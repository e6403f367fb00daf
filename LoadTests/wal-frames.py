# The WAL frames one commit of N chat messages writes with the log's schema (issue 33, LoadTests/README.md "the consumers
# and the writer"): Python's sqlite3 on the same table and indexes, 200,000 rows over 5,000 threads, then 200 commits
# of N random-thread messages. Run: python3 LoadTests/wal-frames.py (its database in a temporary directory, removed).
# Variants (LoadTests/README.md "Issue 33 item: the per-thread index", session 42):
#   --schema index       the log as it is (the `log_thread` index on (threadNo, seq)); the default
#   --schema noindex     no per-thread index at all (the floor)
#   --schema chain       no `log_thread`: each row holds `prev`, its thread's previous position (the writer keeps
#                        every thread's last position in memory), and every --mark-every'th record of a thread gets
#                        a row in `logMark(threadNo, pos, seq)` WITHOUT ROWID, for reads forward from an old position
#   --schema chain-tail  as chain, with the threads' last positions in a table updated by every append
#   --page-size N        the database's page size (1024, 2048; 4096 is the server's)
#   --rows N, --threads N  the log written before the measured commits (200,000 rows over 5,000 threads)
#   --reads              also a 20,000-record thread, and the reads timed on it (history page of 50, catch-up of 200
#                        after a position 10,000 records back), each chain read checked against a plain scan
import sqlite3, os, random, sys, tempfile, shutil, atexit, time, argparse
ap = argparse.ArgumentParser()
ap.add_argument('--schema', default='index'); ap.add_argument('--page-size', type=int, default=4096)
ap.add_argument('--mark-every', type=int, default=64); ap.add_argument('--reads', action='store_true')
ap.add_argument('--rows', type=int, default=200000); ap.add_argument('--threads', type=int, default=5000)
o = ap.parse_args()
scratch = tempfile.mkdtemp(prefix='wal-frames-'); atexit.register(shutil.rmtree, scratch, True); os.chdir(scratch)
random.seed(1)
db = sqlite3.connect('t.db', isolation_level=None)
db.execute(f'PRAGMA page_size={o.page_size}')
db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=FULL'); db.execute('PRAGMA wal_autocheckpoint=0')
db.execute('PRAGMA secure_delete=ON')
chain = o.schema.startswith('chain')
db.executescript(f'''
CREATE TABLE log (pos INTEGER PRIMARY KEY, kind INTEGER NOT NULL, threadNo INTEGER NOT NULL, side INTEGER NOT NULL, seq INTEGER NOT NULL,
  a INTEGER NOT NULL DEFAULT 0, b INTEGER NOT NULL DEFAULT 0, ref TEXT, body TEXT, at INTEGER NOT NULL {", prev INTEGER NOT NULL DEFAULT 0" if chain else ""});
CREATE INDEX log_session ON log(pos) WHERE kind = 3;
CREATE INDEX log_record ON log(pos) WHERE kind = 6;
CREATE INDEX log_meal ON log(threadNo, pos) WHERE kind = 0 AND a = 1;
CREATE TABLE logMark (threadNo INTEGER NOT NULL, pos INTEGER NOT NULL, seq INTEGER NOT NULL, PRIMARY KEY (threadNo, pos)) WITHOUT ROWID;
CREATE TABLE threadTail (threadNo INTEGER PRIMARY KEY, pos INTEGER NOT NULL, n INTEGER NOT NULL) WITHOUT ROWID;
''')
if o.schema == 'index': db.execute('CREATE INDEX log_thread ON log(threadNo, seq)')
threads = o.threads; seqs = [0]*(threads+1); tail = [0]*(threads+1); count = [0]*(threads+1)
HOT = threads  # thread number threads+1... use index threads for the hot thread
def put(t):
    seqs[t] += 1
    args = (t+1, seqs[t] % 2, seqs[t], 'c%08d-%06d' % (t, seqs[t]), 'load message %d with some text to fill' % seqs[t], 1700000000)
    if not chain:
        db.execute('INSERT INTO log (kind, threadNo, side, seq, a, b, ref, body, at) VALUES (0,?,?,?,0,0,?,?,?)', args); return
    cur = db.execute('INSERT INTO log (kind, threadNo, side, seq, a, b, ref, body, at, prev) VALUES (0,?,?,?,0,0,?,?,?,?)', args + (tail[t],))
    pos = cur.lastrowid; tail[t] = pos; count[t] += 1
    if count[t] % o.mark_every == 0:
        db.execute('INSERT INTO logMark (threadNo, pos, seq) VALUES (?,?,?)', (t+1, pos, seqs[t]))
    if o.schema == 'chain-tail':
        db.execute('INSERT INTO threadTail (threadNo, pos, n) VALUES (?,?,?) ON CONFLICT(threadNo) DO UPDATE SET pos=excluded.pos, n=excluded.n', (t+1, pos, count[t]))
def batch(n, hot=False):
    db.execute('BEGIN IMMEDIATE')
    for _ in range(n): put(HOT if hot else random.randrange(threads))
    db.execute('COMMIT')
for _ in range(o.rows // 1000): batch(1000)
if o.reads:
    for _ in range(20): batch(1000, hot=True)     # one long thread (20,000 records) for the reads
    for _ in range(50): batch(1000)
db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
fs = o.page_size + 24
print(f'schema={o.schema} page_size={o.page_size} mark_every={o.mark_every} db={os.path.getsize("t.db")/1e6:.1f} MB')
for per in (30, 100, 300):
    db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    commits = 200
    for _ in range(commits): batch(per)
    frames = (os.path.getsize('t.db-wal') - 32) / fs
    print(f'  {per} rows/commit: {frames/commits:.1f} frames/commit, {frames/commits/per:.2f} pages/msg, {frames*fs/commits/per/1024:.2f} KiB/msg')
if not o.reads: sys.exit()
db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
cols = 'pos, kind, threadNo, side, seq, a, b, ref, body, at'
hot = HOT + 1
def timeit(f, n=200):
    f(); t = time.perf_counter()
    for _ in range(n): r = f()
    return (time.perf_counter() - t) / n * 1e6, r
# history: newest 50 messages with seq < before (here: the newest)
if not chain:
    hist = lambda: db.execute(f'SELECT {cols} FROM log WHERE threadNo = ? AND seq < ? AND kind = 0 ORDER BY seq DESC LIMIT 50', (hot, 1 << 62)).fetchall()
    back = db.execute('SELECT pos FROM log WHERE threadNo = ? ORDER BY seq DESC LIMIT 1 OFFSET 10000', (hot,)).fetchone()[0]
    catch = lambda: db.execute(f'SELECT {cols} FROM log WHERE threadNo = ? AND pos > ? ORDER BY seq, pos LIMIT 200', (hot, back)).fetchall()
    small = lambda: db.execute(f'SELECT {cols} FROM log WHERE threadNo = ? AND seq < ? AND kind = 0 ORDER BY seq DESC LIMIT 50', (17, 1 << 62)).fetchall()
else:
    # the chain walked back from the thread's newest record (the writer's and the loader's tail) by recursive CTE
    # (the walk stops once it has 50 messages: n counts them along the way)
    walk = f'''WITH RECURSIVE c(p, prev, n) AS (SELECT pos, prev, kind = 0 FROM log WHERE pos = ?
                 UNION ALL SELECT l.pos, l.prev, c.n + (l.kind = 0) FROM log l JOIN c ON l.pos = c.prev WHERE c.prev > 0 AND c.n < 50)
               SELECT {cols} FROM log JOIN c ON log.pos = c.p WHERE kind = 0 AND seq < ? ORDER BY pos DESC LIMIT 50'''
    hist = lambda: db.execute(walk, (tail[HOT], 1 << 62)).fetchall()
    small = lambda: db.execute(walk, (tail[16], 1 << 62)).fetchall()
    # catch-up: first mark after the cursor, walk back from it to the cursor, then forward mark by mark
    all_hot = [r[0] for r in db.execute('WITH RECURSIVE c(p) AS (SELECT ? UNION ALL SELECT l.prev FROM log l JOIN c ON l.pos = c.p WHERE l.prev > 0) SELECT p FROM c', (tail[HOT],))]
    back = all_hot[10000]
    def catch():
        out = []; after = back
        while len(out) < 200:
            m = db.execute('SELECT pos FROM logMark WHERE threadNo = ? AND pos > ? ORDER BY pos LIMIT 1', (hot, after)).fetchone()
            start = m[0] if m else tail[HOT]
            seg = db.execute(f'''WITH RECURSIVE c(p) AS (SELECT ? UNION ALL SELECT l.prev FROM log l JOIN c ON l.pos = c.p WHERE l.prev > ?)
                                 SELECT {cols} FROM log JOIN c ON log.pos = c.p ORDER BY pos''', (start, after)).fetchall()
            out += seg; after = start
            if not m: break
        return out[:200]
    ref = db.execute(f'SELECT {cols} FROM log WHERE threadNo = ? AND pos > ? ORDER BY pos LIMIT 200', (hot, back)).fetchall()
    assert catch() == ref, 'chain catch-up differs from the scan'
if chain:
    ref = db.execute(f'SELECT {cols} FROM log WHERE threadNo = ? AND kind = 0 ORDER BY pos DESC LIMIT 50', (hot,)).fetchall()
    assert hist() == ref, 'chain history differs from the scan'
t1, r1 = timeit(hist); t2, r2 = timeit(catch, 50); t3, r3 = timeit(small)
print(f'  reads (load {os.getloadavg()[0]:.2f}): history 50 of the 20,000-record thread {t1:.0f} us ({len(r1)} rows); '
      f'catch-up 200 after a pos 10,000 back {t2:.0f} us ({len(r2)}); history of a 50-record thread {t3:.0f} us ({len(r3)})')
