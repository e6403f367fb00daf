"""The writer side of run-backup-bench.sh: fill a database, commit rows one at a time, report latencies."""
import os
import sqlite3
import sys
import time


def connect(path):
    db = sqlite3.connect(path, isolation_level=None, timeout=30)
    db.execute("PRAGMA journal_mode = WAL")
    db.execute("PRAGMA synchronous = FULL")
    db.execute("CREATE TABLE IF NOT EXISTS benchFiller (id INTEGER PRIMARY KEY, body BLOB NOT NULL)")
    return db


def fill(path, megabytes):
    db = connect(path)
    chunk = 64 * 1024
    rows = megabytes * 1024 * 1024 // chunk
    db.execute("BEGIN")
    for _ in range(rows):
        db.execute("INSERT INTO benchFiller (body) VALUES (?)", (os.urandom(chunk),))
    db.execute("COMMIT")
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    db.close()


def write(path, out):
    db = connect(path)
    with open(out, "w") as log:
        while True:
            started = time.time()
            db.execute("INSERT INTO benchFiller (body) VALUES (?)", (os.urandom(200),))
            log.write(f"{started:.6f} {(time.time() - started) * 1000:.3f}\n")
            log.flush()
            time.sleep(0.002)


def report(path, start, end):
    start, end = float(start), float(end)
    alone, during = [], []
    slowest = (0.0, 0.0)
    for line in open(path):
        at, ms = line.split()
        at, ms = float(at), float(ms)
        (during if start <= at <= end else alone if at < start else []).append(ms)
        if start <= at <= end and ms > slowest[1]:
            slowest = (at - start, ms)

    def line(name, values):
        if not values:
            return f"{name}: no commits"
        values.sort()
        pick = lambda q: values[min(len(values) - 1, int(q * len(values)))]
        return f"{name}: {len(values)} commits, p50 {pick(0.5):.2f} ms, p99 {pick(0.99):.2f} ms, max {values[-1]:.2f} ms"

    print(f"backup took {end - start:.2f} s")
    print(line("writer alone", alone))
    print(line("writer during the backup", during) + f" (the slowest began {slowest[0]:.2f} s into the backup)")


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "fill":
        fill(sys.argv[2], int(sys.argv[3]))
    elif command == "write":
        write(sys.argv[2], sys.argv[3])
    else:
        report(sys.argv[2], sys.argv[3], sys.argv[4])
