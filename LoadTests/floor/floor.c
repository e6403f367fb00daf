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
 * The disk's own floor (-s): appends 4 KiB to a file in DIR and fdatasyncs it, again and again, and prints the
 * latency of each write + fdatasync as p50/p90/p99/max. This is what one group commit of the server's writer
 * costs at least on that file system (SQLite's WAL commit is a write and an fdatasync), so ack latencies are
 * read beside it. With -i MS it sleeps MS between syncs (a light probe running beside a load test); -t SECONDS
 * bounds it in time, -n in samples; SIGTERM/SIGINT stop it early and it still prints what it measured. The
 * file is replaced (not timed) every 16 MiB so the probe always appends, and removed at the end.
 *
 * Usage: floor [-n ROWS] [-d DIR]                        (defaults: 200000 rows, /tmp)
 *        floor -s [-n SYNCS] [-i MS] [-t SECONDS] [-d DIR]  (defaults: 1000 syncs, 0 ms, no time bound)
 * Build: gcc -O2 -Wall -Wextra -o floor floor.c -lsqlite3
 */
#include <fcntl.h>
#include <signal.h>
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

/* ---- The fdatasync probe (-s) ---- */

static volatile sig_atomic_t stop_probe = 0;

static void on_stop(int signo) {
    (void)signo;
    stop_probe = 1;
}

static int compare_doubles(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile (0..1) of n sorted values, nearest rank. */
static double quantile(const double *sorted, long n, double q) {
    long rank = (long)(q * n + 0.999999);
    if (rank < 1) rank = 1;
    if (rank > n) rank = n;
    return sorted[rank - 1];
}

static int open_probe_file(const char *path) {
    unlink(path);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_TRUNC, 0600);
    if (fd < 0) {
        perror("floor: open probe file");
        exit(1);
    }
    return fd;
}

/* Appends 4 KiB + fdatasync up to `count` times (or `seconds`), `interval_ms` apart; prints the latencies. */
static int run_sync_probe(const char *dir, long count, long interval_ms, double seconds) {
    enum { BLOCK = 4096 };
    const long file_limit = 16L << 20;
    char path[4096];
    snprintf(path, sizeof path, "%s/floor-fdatasync-%ld.bin", dir, (long)getpid());
    struct sigaction action;
    memset(&action, 0, sizeof action);
    action.sa_handler = on_stop;
    sigaction(SIGTERM, &action, NULL);
    sigaction(SIGINT, &action, NULL);

    double *samples = malloc(sizeof(double) * (size_t)count);
    if (!samples) {
        fprintf(stderr, "floor: out of memory\n");
        return 1;
    }
    char block[BLOCK];
    memset(block, 'f', sizeof block);
    int fd = open_probe_file(path);
    long written = 0, n = 0;
    double start = wall_seconds();
    while (n < count && !stop_probe && (seconds <= 0 || wall_seconds() - start < seconds)) {
        if (written >= file_limit) {
            close(fd);
            fd = open_probe_file(path);
            written = 0;
        }
        double t0 = wall_seconds();
        if (write(fd, block, BLOCK) != BLOCK || fdatasync(fd) != 0) {
            perror("floor: write/fdatasync");
            break;
        }
        samples[n++] = (wall_seconds() - t0) * 1e3;
        written += BLOCK;
        if (interval_ms > 0 && !stop_probe) {
            struct timespec pause = {interval_ms / 1000, (interval_ms % 1000) * 1000000L};
            nanosleep(&pause, NULL);
        }
    }
    close(fd);
    unlink(path);
    if (n == 0) {
        printf("fdatasync samples=0\n");
        free(samples);
        return 1;
    }
    qsort(samples, (size_t)n, sizeof(double), compare_doubles);
    /* One line, key=value, milliseconds: LoadTests/run-load.sh reads it. */
    printf("fdatasync samples=%ld p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f max_ms=%.3f seconds=%.1f\n", n,
           quantile(samples, n, 0.50), quantile(samples, n, 0.90), quantile(samples, n, 0.99), samples[n - 1],
           wall_seconds() - start);
    free(samples);
    return 0;
}

int main(int argc, char **argv) {
    long rows = -1, interval_ms = 0;
    double seconds = 0;
    int sync_probe = 0;
    const char *dir = "/tmp";
    int opt;
    while ((opt = getopt(argc, argv, "n:d:si:t:h")) != -1) {
        switch (opt) {
        case 'n': rows = atol(optarg); break;
        case 'd': dir = optarg; break;
        case 's': sync_probe = 1; break;
        case 'i': interval_ms = atol(optarg); break;
        case 't': seconds = atof(optarg); break;
        default:
            fprintf(stderr, "usage: %s [-n ROWS] [-d DIR] | -s [-n SYNCS] [-i MS] [-t SECONDS] [-d DIR]\n", argv[0]);
            return opt == 'h' ? 0 : 2;
        }
    }
    if (rows < 0) rows = sync_probe ? 1000 : 200000;
    if (rows <= 0 || rows > 100000000L || interval_ms < 0 || interval_ms > 60000 || seconds < 0 || optind != argc) {
        fprintf(stderr, "usage: %s [-n ROWS] [-d DIR] | -s [-n SYNCS] [-i MS] [-t SECONDS] [-d DIR]\n", argv[0]);
        return 2;
    }
    if (sync_probe) return run_sync_probe(dir, rows, interval_ms, seconds);

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
