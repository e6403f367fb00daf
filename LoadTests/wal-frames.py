# The WAL frames one commit of N chat messages writes with the log's schema (issue 33, LoadTests/README.md "the consumers
# and the writer"): Python's sqlite3 on the same table and indexes, 200,000 rows over 5,000 threads, then 200 commits
# of N random-thread messages. Run: python3 LoadTests/wal-frames.py (its database in a temporary directory, removed).
import sqlite3, os, random, sys, tempfile, shutil, atexit
scratch = tempfile.mkdtemp(prefix='wal-frames-')
atexit.register(shutil.rmtree, scratch, True)
os.chdir(scratch)
random.seed(1)
db = sqlite3.connect('t.db', isolation_level=None)
db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=FULL'); db.execute('PRAGMA wal_autocheckpoint=0')
db.execute('PRAGMA secure_delete=ON')
db.executescript('''
CREATE TABLE log (pos INTEGER PRIMARY KEY, kind INTEGER NOT NULL, threadNo INTEGER NOT NULL, side INTEGER NOT NULL, seq INTEGER NOT NULL,
  a INTEGER NOT NULL DEFAULT 0, b INTEGER NOT NULL DEFAULT 0, ref TEXT, body TEXT, at INTEGER NOT NULL);
CREATE INDEX log_thread ON log(threadNo, seq);
CREATE INDEX log_session ON log(pos) WHERE kind = 3;
CREATE INDEX log_record ON log(pos) WHERE kind = 6;
CREATE INDEX log_meal ON log(threadNo, pos) WHERE kind = 0 AND a = 1;
''')
threads = 5000; seqs = [0]*threads
def batch(n):
    db.execute('BEGIN IMMEDIATE')
    for _ in range(n):
        t = random.randrange(threads); seqs[t] += 1
        db.execute('INSERT INTO log (kind, threadNo, side, seq, a, b, ref, body, at) VALUES (0,?,?,?,0,0,?,?,?)',
                   (t+1, seqs[t] % 2, seqs[t], 'c%08d-%06d' % (t, seqs[t]), 'load message %d with some text to fill' % seqs[t], 1700000000))
    db.execute('COMMIT')
for _ in range(200000 // 1000): batch(1000)
db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
for per in (30, 100, 300):
    db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    commits = 200
    for _ in range(commits): batch(per)
    frames = (os.path.getsize('t.db-wal') - 32) / (4096 + 24)
    print(f'{per} rows/commit: {frames/commits:.1f} WAL frames per commit, {frames/commits/per:.2f} pages per message')
