/*
 * floor.c: SQLite's floor for appending Spotter chat records.
 *
 * Spotter persists every chat change as one row appended to table `log`, in WAL mode with
 * synchronous=FULL, group-committed by one writer thread. This program does only that, with
 * nothing around it, so the server's numbers can be compared to what SQLite itself costs here.
 *
 * For each case (layout x rows per commit) it creates a fresh database file, appends N rows with
 * one prepared INSERT (bind + step + reset per row), BEGIN IMMEDIATE ... COMMIT every `batch`
 * rows, and prints wall rows/s, process CPU (user+sys) µs per row, and commits/s.
 *
 * Layouts:
 *   plain  the `log` table without its index
 *   log    the `log` table with the `log_thread(threadNo, seq)` index
 * Both insert the same ~250-byte rows (200-byte body, 20-character ref), spread round-robin over
 * 5,000 threads (threadNo = i % 5000 + 1, seq = i / 5000 + 1): what Spotter's writer sees under
 * the 5,000-pair chat load test. WAL auto-checkpointing is left at SQLite's default.
 *
 * Usage: floor [-n ROWS] [-d DIR]      (defaults: 200000 rows, /tmp)
 * Build: gcc -O2 -Wall -Wextra -o floor floor.c -lsqlite3
 */
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#define THREADS 5000 /* chat threads the rows are spread over, round-robin */

/* Spotter's schema, copied exactly; the index is created only for the `log` layout. */
static const char *TABLE_SQL =
    "CREATE TABLE log (pos INTEGER PRIMARY KEY, kind INTEGER NOT NULL, threadNo INTEGER NOT NULL, "
    "side INTEGER NOT NULL, seq INTEGER NOT NULL, a INTEGER NOT NULL DEFAULT 0, "
    "b INTEGER NOT NULL DEFAULT 0, ref TEXT, body TEXT, at INTEGER NOT NULL);";
static const char *INDEX_SQL = "CREATE INDEX log_thread ON log(threadNo, seq);";

/* The same INSERT Spotter's writer uses (pos is assigned by SQLite). */
static const char *INSERT_SQL =
    "INSERT INTO log (kind, threadNo, side, seq, a, b, ref, body, at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";

static sqlite3 *db;

/* Aborts with SQLite's message if rc is not what the call should return. */
static void check(int rc, int want, const char *what) {
    if (rc != want) {
        fprintf(stderr, "floor: %s: %s (rc=%d)\n", what, db ? sqlite3_errmsg(db) : "?", rc);
        exit(1);
    }
}

static void exec(const char *sql) {
    char *err = NULL;
    if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK) {
        fprintf(stderr, "floor: %s: %s\n", sql, err ? err : "?");
        exit(1);
    }
}

static double wall_seconds(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* User + system CPU time of the whole process, in microseconds. */
static double cpu_micros(void) {
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
}

/* Removes a database file and its WAL / shared-memory companions, if present. */
static void remove_db(const char *path) {
    char side[4200];
    unlink(path);
    snprintf(side, sizeof side, "%s-wal", path);
    unlink(side);
    snprintf(side, sizeof side, "%s-shm", path);
    unlink(side);
}

/* Runs one case: appends `rows` rows into a fresh file, `batch` rows per transaction. */
static void run_case(const char *dir, const char *layout, int with_index, long rows, int batch) {
    char path[4096];
    snprintf(path, sizeof path, "%s/floor-%s-%d.sqlite", dir, layout, batch);
    remove_db(path);
    check(sqlite3_open(path, &db), SQLITE_OK, "open");
    exec("PRAGMA journal_mode=WAL; PRAGMA synchronous=FULL; PRAGMA cache_size=-65536;");
    exec(TABLE_SQL);
    if (with_index) exec(INDEX_SQL);

    sqlite3_stmt *ins, *begin, *commit;
    check(sqlite3_prepare_v2(db, INSERT_SQL, -1, &ins, NULL), SQLITE_OK, "prepare insert");
    check(sqlite3_prepare_v2(db, "BEGIN IMMEDIATE", -1, &begin, NULL), SQLITE_OK, "prepare begin");
    check(sqlite3_prepare_v2(db, "COMMIT", -1, &commit, NULL), SQLITE_OK, "prepare commit");

    /* Row payload: a 200-byte text body and a 20-character id (both layouts insert identical rows;
     * only the index differs). Refreshing them costs a short snprintf per row. */
    char body[201], ref[21];
    memset(body, 'x', 200);
    body[200] = '\0';
    const long long at0 = 1700000000000LL; /* a fixed epoch-ms base, incremented per row */

    long commits = 0;
    double cpu0 = cpu_micros(), t0 = wall_seconds();
    for (long i = 0; i < rows; i++) {
        if (i % batch == 0) {
            check(sqlite3_step(begin), SQLITE_DONE, "begin");
            sqlite3_reset(begin);
        }
        snprintf(ref, sizeof ref, "m%019ld", i);
        memcpy(body, ref, 20); /* vary the body a little so pages are not all alike */
        sqlite3_bind_int(ins, 1, 1);                                 /* kind */
        sqlite3_bind_int64(ins, 2, i % THREADS + 1);     /* threadNo */
        sqlite3_bind_int(ins, 3, (int)(i & 1));                      /* side */
        sqlite3_bind_int64(ins, 4, i / THREADS + 1);     /* seq */
        sqlite3_bind_int(ins, 5, 0);                                 /* a */
        sqlite3_bind_int(ins, 6, 0);                                 /* b */
        sqlite3_bind_text(ins, 7, ref, 20, SQLITE_STATIC);           /* ref */
        sqlite3_bind_text(ins, 8, body, 200, SQLITE_STATIC);         /* body */
        sqlite3_bind_int64(ins, 9, at0 + i);                         /* at */
        check(sqlite3_step(ins), SQLITE_DONE, "insert");
        sqlite3_reset(ins);
        if (i % batch == batch - 1 || i == rows - 1) {
            check(sqlite3_step(commit), SQLITE_DONE, "commit");
            sqlite3_reset(commit);
            commits++;
        }
    }
    double secs = wall_seconds() - t0, cpu = cpu_micros() - cpu0;

    printf("| %s | %d | %.0f | %.1f | %.0f |\n", layout, batch, rows / secs, cpu / rows, commits / secs);
    fflush(stdout);

    sqlite3_finalize(ins);
    sqlite3_finalize(begin);
    sqlite3_finalize(commit);
    check(sqlite3_close(db), SQLITE_OK, "close");
    db = NULL;
    remove_db(path);
}

int main(int argc, char **argv) {
    long rows = 200000;
    const char *dir = "/tmp";
    int opt;
    while ((opt = getopt(argc, argv, "n:d:h")) != -1) {
        switch (opt) {
        case 'n': rows = atol(optarg); break;
        case 'd': dir = optarg; break;
        default:
            fprintf(stderr, "usage: %s [-n ROWS] [-d DIR]\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (rows <= 0 || optind != argc) {
        fprintf(stderr, "usage: %s [-n ROWS] [-d DIR]\n", argv[0]);
        return 2;
    }

    printf("SQLite %s\n", sqlite3_libversion());
    printf("command:");
    for (int i = 0; i < argc; i++) printf(" %s", argv[i]);
    printf("\n\n");
    printf("| layout | rows per commit | rows/s | CPU µs per row | commits/s |\n");
    printf("|---|---:|---:|---:|---:|\n");

    static const int batches[] = {10, 100};
    for (int b = 0; b < 2; b++) run_case(dir, "plain", 0, rows, batches[b]);
    for (int b = 0; b < 2; b++) run_case(dir, "log", 1, rows, batches[b]);
    return 0;
}
