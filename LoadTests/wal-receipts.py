# The WAL frames one checkpoint of the thread views writes (issue 33, LoadTests/README.md "the checkpoint's
# receipts", session 42): Python's sqlite3 on the tables `ChatLog.checkpoint` writes — `thread` (a rowid table,
# rows in number order) and the receipts, keyed as before v30 (thread id, a random UUID, and user id: `receipt`)
# or after (thread number and side: `threadReceipt`) — with THREADS threads, all changed, saved in parts of 256
# threads, each part its own commit, as the server does each second at 10,000 msgs/s with 5,000 pairs.
# Run: python3 LoadTests/wal-receipts.py [THREADS]  (its database in a temporary directory, removed).
import sqlite3, os, random, sys, tempfile, shutil, atexit, uuid
threads = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
part = 256
scratch = tempfile.mkdtemp(prefix='wal-receipts-')
atexit.register(shutil.rmtree, scratch, True)
random.seed(1)

def run(layout, order):
    path = os.path.join(scratch, f'{layout}-{order}.db')
    db = sqlite3.connect(path, isolation_level=None)
    db.execute('PRAGMA journal_mode=WAL'); db.execute('PRAGMA synchronous=FULL'); db.execute('PRAGMA wal_autocheckpoint=0')
    db.executescript('''
    CREATE TABLE thread (id TEXT PRIMARY KEY NOT NULL, coachId TEXT NOT NULL, clientId TEXT NOT NULL, createdAt INTEGER NOT NULL,
      lastSeq INTEGER NOT NULL DEFAULT 0, lastMessageAt INTEGER, lastPreview TEXT, lastSenderId TEXT, no INTEGER);
    CREATE UNIQUE INDEX thread_no ON thread(no);
    CREATE TABLE receipt (threadId TEXT NOT NULL, userId TEXT NOT NULL, deliveredSeq INTEGER NOT NULL DEFAULT 0,
      readSeq INTEGER NOT NULL DEFAULT 0, PRIMARY KEY (threadId, userId)) WITHOUT ROWID;
    CREATE TABLE threadReceipt (threadNo INTEGER NOT NULL, side INTEGER NOT NULL, deliveredSeq INTEGER NOT NULL,
      readSeq INTEGER NOT NULL, PRIMARY KEY (threadNo, side)) WITHOUT ROWID;
    ''')
    rng = random.Random(2)
    db.execute('BEGIN')
    for no in range(1, threads + 1):
        db.execute('INSERT INTO thread (id, coachId, clientId, createdAt, no) VALUES (?, ?, ?, 0, ?)',
                   (str(uuid.UUID(int=rng.getrandbits(128))), str(uuid.UUID(int=rng.getrandbits(128))),
                    str(uuid.UUID(int=rng.getrandbits(128))), no))
    db.execute('COMMIT')
    view = '''UPDATE thread SET lastSeq = ?, lastMessageAt = ?, lastPreview = ?,
              lastSenderId = CASE ? WHEN 0 THEN coachId WHEN 1 THEN clientId END WHERE no = ?'''
    old = '''INSERT INTO receipt (threadId, userId, deliveredSeq, readSeq)
             SELECT id, CASE ? WHEN 0 THEN coachId ELSE clientId END, ?, ? FROM thread WHERE no = ?
             ON CONFLICT(threadId, userId) DO UPDATE SET deliveredSeq = excluded.deliveredSeq, readSeq = excluded.readSeq'''
    new = '''INSERT INTO threadReceipt (side, deliveredSeq, readSeq, threadNo) VALUES (?, ?, ?, ?)
             ON CONFLICT(threadNo, side) DO UPDATE SET deliveredSeq = excluded.deliveredSeq, readSeq = excluded.readSeq'''
    def checkpoint(seq):
        numbers = list(range(1, threads + 1))
        rng.shuffle(numbers)  # the order threads first changed in the second
        if order == 'sorted': numbers.sort()
        for start in range(0, len(numbers), part):
            db.execute('BEGIN IMMEDIATE')
            for no in numbers[start:start + part]:
                db.execute(view, (seq, 1700000000 + seq, 'a preview of the last message, some forty chars', seq % 2, no))
                for side in (0, 1):
                    db.execute(old if layout == 'old' else new, (side, seq, seq - 1, no))
            db.execute('COMMIT')
    checkpoint(1)  # every row exists
    db.execute('PRAGMA wal_checkpoint(TRUNCATE)')
    rounds = 5
    for r in range(rounds): checkpoint(2 + r)
    frames = (os.path.getsize(path + '-wal') - 32) / (4096 + 24)
    db.close()
    return frames / rounds

print(f'{threads} threads, all changed, parts of {part} threads (each a commit): WAL frames per checkpoint')
for layout, order in (('old', 'as changed'), ('old', 'sorted'), ('new', 'as changed'), ('new', 'sorted')):
    frames = run(layout, order)
    print(f'  receipts by {"(thread id, user id)" if layout == "old" else "(thread no, side)   "}, threads {order:10}: '
          f'{frames:7.0f} frames ({frames / threads:.2f} per thread)')
