# Which tables and indexes a server's WAL frames belong to (issue 33; LoadTests/README.md "the per-thread index",
# session 42): reads a copy of the WAL (`w`) and of the database (`d`) from DIR, maps each frame's page to its
# owner with SQLite's `dbstat`, and prints the shares. Copy both while a load runs, e.g. 10 s into the window:
#   cp $DATA/spotter.sqlite-wal DIR/w; cp $DATA/spotter.sqlite DIR/d; python3 LoadTests/wal-owners.py DIR
# (the database copy is read through a further copy, DIR/copy.db, so the originals stay untouched).
import struct, sqlite3, sys, collections, shutil
d = sys.argv[1]
w = open(d + '/w', 'rb').read()
magic, ver, psize = struct.unpack('>III', w[:12])
fs = psize + 24
n = (len(w) - 32) // fs
pages = collections.Counter(); commits = 0
for i in range(n):
    off = 32 + i * fs
    pg, commit = struct.unpack('>II', w[off:off+8])
    pages[pg] += 1
    if commit: commits += 1
shutil.copy(d + '/d', d + '/copy.db')
db = sqlite3.connect(d + '/copy.db')
try:
    owner = {pg: name for name, pg in db.execute('SELECT name, pageno FROM dbstat')}
except Exception as e:
    print('no dbstat', e); owner = {}
by = collections.Counter()
for pg, c in pages.items(): by[owner.get(pg, '?(new or free)')] += c
print(f'{d}: {n} frames, {commits} commits, {n/max(commits,1):.1f} frames/commit')
for name, c in by.most_common(12): print(f'  {name:30} {c:7} {c/n*100:5.1f}%')
