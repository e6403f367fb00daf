#!/usr/bin/env bash
# The restart benchmark: how long `spotter serve` takes from process start to
# serving (`GET /healthz` answers 200 with "status":"ok") with MESSAGES
# messages and USERS users on disk (the issue's target: 10,000,000 messages,
# 100,000 users, serving within 5 s), and whether a resume works afterwards.
#
# 1. Database (cached): unless RESTART_DB already holds a complete database
#    for these MESSAGES/USERS (marker file .restart-db-complete), builds one:
#    `spotter admin create-admin` migrates a fresh data dir (and makes
#    admin@load.test, password secret123, whose scrypt hash every generated
#    user shares), then one sqlite3 transaction of set-based SQL fills it:
#      - USERS/2 coaches (`user` + `coach`) and the rest clients (`user`,
#        onboardingCompleted 1, no clientProfile: as the load-test
#        provisioning does), coachN@load.test / clientN@load.test;
#      - one link and one thread per client (thread no = client number),
#        with the checkpointed views (lastSeq, lastMessageAt, lastPreview,
#        lastSenderId) and both sides' receipts read up to lastSeq;
#      - MESSAGES rows in `log`: kind 0, round-robin over the threads
#        (pos i → thread (i-1) % threads + 1, seq (i-1) / threads + 1, so
#        seqs are gapless per thread), sides alternating coach/client,
#        ref 'm<i>', a ~62-character body;
#      - logCheckpoint: pos = MAX(pos), resumeFloor 0 (nothing to replay).
#    The `log_thread` index is dropped for the load and rebuilt after it
#    (one sort instead of 10 M scattered index inserts).
# 2. Startup, RUNS times: starts `spotter serve` on the cached data dir
#    (no copy; a run adds a serverRun row and a session, the data stay
#    valid), polls /healthz every 20 ms and reports the ms from the fork to
#    the first 200 "ok", the server's VmRSS/VmHWM then, and the ms a SIGTERM
#    takes to stop it.
# 3. Resume: with the last run's server, signs in as CHECK_CLIENT, opens
#    /v1/ws?cursor=C with curl (C = the position of that client's thread's
#    message lastSeq-RESUME_BACK) and checks the raw frames: hello, then one
#    `message` event per message after C (seqs lastSeq-RESUME_BACK+1 ..
#    lastSeq, in order), then `live`.
# Prints a markdown summary. Sends only to 127.0.0.1; every wait is bounded;
# stops only the server PID it started. Exit status 1 if the build, a start
# or the resume check fails (a start slower than TARGET_MS is reported, not
# a failure).
#
# Settings (environment, defaults in brackets):
#   BIN [.build/release/spotter]  the server binary (copied to a temp dir first,
#                                 so a rebuild meanwhile does not disturb a run)
#   RESTART_DB [/tmp/spotter-restart-10m]  the cached data dir
#   MESSAGES [10000000]   USERS [100000]  (half coaches, half clients)
#   REBUILD [0]           1: rebuild the database even if cached
#   BUILD_JOURNAL [OFF]   journal_mode for the bulk load (OFF or WAL); the
#                         database is switched to WAL afterwards either way
#   RUNS [3]              PORT [a free one per run]
#   STARTUP_TIMEOUT [60]  seconds a start may take before it counts as failed
#   TARGET_MS [5000]      the issue's target, for the verdict
#   CHECK_CLIENT [USERS/4, a client in the middle]  RESUME_BACK [10]
#
#   LoadTests/run-restart.sh
#   MESSAGES=1000000 RESTART_DB=/tmp/spotter-restart-1m LoadTests/run-restart.sh
set -euo pipefail

cd "$(dirname "$0")/.."
ROOT=$(pwd)

BIN=${BIN:-$ROOT/.build/release/spotter}
RESTART_DB=${RESTART_DB:-/tmp/spotter-restart-10m}
MESSAGES=${MESSAGES:-10000000}
USERS=${USERS:-100000}
REBUILD=${REBUILD:-0}
BUILD_JOURNAL=${BUILD_JOURNAL:-OFF}
RUNS=${RUNS:-3}
PORT=${PORT:-}
STARTUP_TIMEOUT=${STARTUP_TIMEOUT:-60}
TARGET_MS=${TARGET_MS:-5000}
RESUME_BACK=${RESUME_BACK:-10}
PASSWORD=secret123
ADMIN_EMAIL=admin@load.test
CHUNK=1000000            # log rows per INSERT statement (a progress line after each)
BASE_AT=1750000000       # `at` of the first message; 10 messages per second after it
MARKER=.restart-db-complete

die() { echo "run-restart: $*" >&2; exit 1; }

command -v sqlite3 >/dev/null 2>&1 || { echo "sqlite3 not found: apt-get install -y sqlite3" >&2; exit 1; }
command -v curl >/dev/null 2>&1 || die "curl not found"
command -v python3 >/dev/null 2>&1 || die "python3 not found"
[ -x "$BIN" ] || die "no server binary at $BIN (build it, or set BIN)"
case "$BUILD_JOURNAL" in OFF|WAL) ;; *) die "BUILD_JOURNAL must be OFF or WAL" ;; esac
for v in MESSAGES USERS RUNS STARTUP_TIMEOUT TARGET_MS RESUME_BACK; do
    [[ ${!v} =~ ^[0-9]+$ ]] || die "$v must be a whole number"
done
[ "$USERS" -ge 2 ] || die "USERS must be at least 2"
[ "$RUNS" -ge 1 ] || die "RUNS must be at least 1"

COACHES=$((USERS / 2))
CLIENTS=$((USERS - COACHES))   # one thread per client
THREADS=$CLIENTS
CHECK_CLIENT=${CHECK_CLIENT:-$(( (CLIENTS + 1) / 2 ))}
[ "$CHECK_CLIENT" -ge 1 ] && [ "$CHECK_CLIENT" -le "$CLIENTS" ] || die "CHECK_CLIENT must be 1...$CLIENTS"

WORK=$(mktemp -d /tmp/spotter-restart-run.XXXXXX)
SERVER_PID=""
BUILD_DIR=""
stop_server() {  # SIGTERM to the server this script started, wait ≤ 20 s, then SIGKILL (that PID only)
    [ -n "$SERVER_PID" ] || return 0
    if kill -0 "$SERVER_PID" 2>/dev/null; then
        kill -TERM "$SERVER_PID" 2>/dev/null || true
        for _ in $(seq 1 200); do kill -0 "$SERVER_PID" 2>/dev/null || break; sleep 0.1; done
        if kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "   server $SERVER_PID still running 20 s after SIGTERM: SIGKILL" >&2
            kill -KILL "$SERVER_PID" 2>/dev/null || true
        fi
    fi
    wait "$SERVER_PID" 2>/dev/null || true
    SERVER_PID=""
}
cleanup() {
    stop_server
    if [ -n "$BUILD_DIR" ]; then rm -rf "$BUILD_DIR"; fi   # a build that did not finish
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

cp "$BIN" "$WORK/spotter"
SPOTTER="$WORK/spotter"

now_ms() { echo $(( $(date +%s%N) / 1000000 )); }
since_s() { awk -v a="$1" -v b="$(now_ms)" 'BEGIN { printf "%.1f", (b - a) / 1000 }'; }   # seconds since ms $1

free_port() {  # a loopback port nothing listens on, below the ephemeral range
    local low candidate
    low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
    [ "$low" -gt 21000 ] || low=32768
    for _ in $(seq 1 100); do
        candidate=$((20000 + RANDOM % (low - 20000)))
        if ! (exec 3<>"/dev/tcp/127.0.0.1/$candidate") 2>/dev/null; then echo "$candidate"; return 0; fi
    done
    return 1
}

db_size() {  # human-readable size of the database files
    du -ch "$1"/spotter.sqlite* 2>/dev/null | tail -1 | cut -f1
}

# ---------------------------------------------------------------------------
# 1. The database
# ---------------------------------------------------------------------------

marker_matches() {
    [ -f "$RESTART_DB/$MARKER" ] && [ -f "$RESTART_DB/spotter.sqlite" ] &&
        grep -qx "messages=$MESSAGES" "$RESTART_DB/$MARKER" && grep -qx "users=$USERS" "$RESTART_DB/$MARKER"
}

# Writes the fill script for $1 (the admin's password hash) to stdout.
fill_sql() {
    local hash=${1//\'/\'\'}
    local created=$((BASE_AT - 86400))
    cat <<SQL
.output /dev/null
PRAGMA journal_mode=$BUILD_JOURNAL;
PRAGMA synchronous=OFF;
PRAGMA cache_size=-1048576;
PRAGMA temp_store=MEMORY;
PRAGMA threads=4;
PRAGMA foreign_keys=OFF;
.output
BEGIN;
DROP INDEX log_thread;

WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $COACHES)
INSERT INTO "user" (id, role, fullName, email, passwordHash, language, onboardingCompleted, createdAt)
SELECT printf('00000001-0000-4000-8000-%012d', k), 'coach', 'Coach ' || k, 'coach' || k || '@load.test',
       '$hash', 'en', 0, $created FROM n;
INSERT INTO coach (userId) SELECT id FROM "user" WHERE role = 'coach' AND email LIKE 'coach%@load.test';

WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $CLIENTS)
INSERT INTO "user" (id, role, fullName, email, passwordHash, language, onboardingCompleted, createdAt)
SELECT printf('00000002-0000-4000-8000-%012d', k), 'client', 'Client ' || k, 'client' || k || '@load.test',
       '$hash', 'en', 1, $created FROM n;

WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $CLIENTS)
INSERT INTO coachClientLink (clientId, coachId, createdAt)
SELECT printf('00000002-0000-4000-8000-%012d', k), printf('00000001-0000-4000-8000-%012d', (k - 1) % $COACHES + 1),
       $created FROM n;
.print users: $COACHES coaches, $CLIENTS clients, $CLIENTS links
SQL
    local lo hi
    for ((lo = 1; lo <= MESSAGES; lo += CHUNK)); do
        hi=$((lo + CHUNK - 1))
        [ "$hi" -le "$MESSAGES" ] || hi=$MESSAGES
        cat <<SQL
WITH RECURSIVE n(i) AS (SELECT $lo UNION ALL SELECT i + 1 FROM n WHERE i < $hi),
m(i, no, seq) AS (SELECT i, (i - 1) % $THREADS + 1, (i - 1) / $THREADS + 1 FROM n)
INSERT INTO log (pos, kind, threadNo, side, seq, a, b, ref, body, at)
SELECT i, 0, no, (seq - 1) % 2, seq, 0, 0, 'm' || i,
       printf('Seq %03d of thread %05d: how did the workout go, any soreness?', seq, no),
       $BASE_AT + (i - 1) / 10
FROM m;
.print log: $hi of $MESSAGES rows
SQL
    done
    cat <<SQL
WITH RECURSIVE n(k) AS (SELECT 1 UNION ALL SELECT k + 1 FROM n WHERE k < $THREADS),
v(k, lastSeq) AS (SELECT k, CASE WHEN k <= $MESSAGES THEN ($MESSAGES - k) / $THREADS + 1 ELSE 0 END FROM n),
p(k, lastSeq, coachId, clientId) AS (
    SELECT k, lastSeq, printf('00000001-0000-4000-8000-%012d', (k - 1) % $COACHES + 1),
           printf('00000002-0000-4000-8000-%012d', k) FROM v)
INSERT INTO thread (id, coachId, clientId, createdAt, no, lastSeq, lastMessageAt, lastPreview, lastSenderId)
SELECT printf('00000003-0000-4000-8000-%012d', p.k), p.coachId, p.clientId, $created, p.k, p.lastSeq, l.at, l.body,
       CASE l.side WHEN 0 THEN p.coachId WHEN 1 THEN p.clientId END
FROM p LEFT JOIN log l ON p.lastSeq > 0 AND l.pos = (p.lastSeq - 1) * $THREADS + p.k;
INSERT INTO receipt (threadId, userId, deliveredSeq, readSeq)
SELECT id, coachId, lastSeq, lastSeq FROM thread WHERE lastSeq > 0 AND id LIKE '00000003-%'
UNION ALL
SELECT id, clientId, lastSeq, lastSeq FROM thread WHERE lastSeq > 0 AND id LIKE '00000003-%';
.print threads: $THREADS with views and receipts
UPDATE logCheckpoint SET pos = (SELECT COALESCE(MAX(pos), 0) FROM log), resumeFloor = 0 WHERE id = 1;
.print log_thread index: building
CREATE INDEX log_thread ON log(threadNo, seq);
.print log_thread index: built
COMMIT;
.output /dev/null
PRAGMA journal_mode=WAL;
SQL
}

BUILD_SECONDS=""
BUILD_NOTE=""
if [ "$REBUILD" != 1 ] && marker_matches; then
    BUILD_SECONDS=$(sed -n 's/^build_seconds=//p' "$RESTART_DB/$MARKER")
    BUILD_NOTE="cached (built $(sed -n 's/^built_at=//p' "$RESTART_DB/$MARKER") in ${BUILD_SECONDS} s)"
    echo "== database: reusing $RESTART_DB ($MESSAGES messages, $USERS users), $BUILD_NOTE"
else
    if [ -e "$RESTART_DB" ]; then
        # Only ever delete what this script made: a data dir (spotter.sqlite, server log, token secret…) or nothing.
        if [ -d "$RESTART_DB" ] && { [ -f "$RESTART_DB/spotter.sqlite" ] || [ -z "$(ls -A "$RESTART_DB")" ]; }; then
            echo "== database: removing $RESTART_DB (incomplete, other MESSAGES/USERS, or REBUILD=1)"
            rm -rf "$RESTART_DB"
        else
            die "$RESTART_DB exists and is not a spotter data dir; move it or set RESTART_DB"
        fi
    fi
    BUILD_DIR="$RESTART_DB.building.$$"
    mkdir -p "$BUILD_DIR"
    echo "== database: building $MESSAGES messages, $USERS users in $BUILD_DIR (journal $BUILD_JOURNAL during the load)"
    build_start=$(now_ms)
    SPOTTER_ADMIN_PASSWORD=$PASSWORD "$SPOTTER" admin create-admin --data-dir "$BUILD_DIR" \
        --email "$ADMIN_EMAIL" --full-name Load --log-level warning >/dev/null
    HASH=$(sqlite3 "$BUILD_DIR/spotter.sqlite" "SELECT passwordHash FROM \"user\" WHERE email = '$ADMIN_EMAIL'")
    [ -n "$HASH" ] || die "create-admin made no admin"
    fill_sql "$HASH" > "$WORK/fill.sql"
    sqlite3 -bail "$BUILD_DIR/spotter.sqlite" < "$WORK/fill.sql" | while IFS= read -r line; do
        printf '   %6s s  %s\n' "$(since_s "$build_start")" "$line"
    done
    # Sanity: the counts and the checkpoint the server will read.
    read -r n_log max_pos n_threads n_users cp_pos jm < <(sqlite3 -separator ' ' "$BUILD_DIR/spotter.sqlite" \
        "SELECT (SELECT COUNT(*) FROM log), (SELECT COALESCE(MAX(pos),0) FROM log), (SELECT COUNT(*) FROM thread),
                (SELECT COUNT(*) FROM \"user\"), (SELECT pos FROM logCheckpoint WHERE id = 1), (SELECT journal_mode FROM pragma_journal_mode)") || true
    [ "$n_log" = "$MESSAGES" ] && [ "$max_pos" = "$MESSAGES" ] && [ "$cp_pos" = "$MESSAGES" ] || \
        die "log check failed: $n_log rows, max pos $max_pos, checkpoint $cp_pos (want $MESSAGES)"
    [ "$n_threads" = "$THREADS" ] && [ "$n_users" = "$((USERS + 1))" ] || \
        die "account check failed: $n_threads threads, $n_users users (want $THREADS, $((USERS + 1)) with the admin)"
    [ "$jm" = wal ] || die "journal mode is $jm, not wal"
    BUILD_SECONDS=$(since_s "$build_start")
    printf 'messages=%s\nusers=%s\nbuild_seconds=%s\nbuild_journal=%s\nbuilt_at=%s\n' \
        "$MESSAGES" "$USERS" "$BUILD_SECONDS" "$BUILD_JOURNAL" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" > "$BUILD_DIR/$MARKER"
    mv "$BUILD_DIR" "$RESTART_DB"
    BUILD_DIR=""
    BUILD_NOTE="built now in ${BUILD_SECONDS} s"
    echo "== database: built in $BUILD_SECONDS s ($(db_size "$RESTART_DB"), $(awk -v n="$MESSAGES" -v s="$BUILD_SECONDS" 'BEGIN { printf "%d", n / s }') messages/s overall)"
fi
DB_SIZE=$(db_size "$RESTART_DB")
rm -f "$RESTART_DB/server.log"   # this run's server log starts empty

# The resume check's thread, read before any server runs.
CHECK_EMAIL="client$CHECK_CLIENT@load.test"
read -r CHECK_NO CHECK_LASTSEQ < <(sqlite3 -separator ' ' "$RESTART_DB/spotter.sqlite" \
    "SELECT t.no, t.lastSeq FROM thread t JOIN \"user\" u ON u.id = t.clientId WHERE u.email = '$CHECK_EMAIL'") || true
[ -n "${CHECK_NO:-}" ] || die "no thread for $CHECK_EMAIL"
FROM_SEQ=$((CHECK_LASTSEQ - RESUME_BACK))
[ "$FROM_SEQ" -ge 1 ] || die "thread $CHECK_NO has only $CHECK_LASTSEQ messages; lower RESUME_BACK"
# A message's record kind (ChatRecord.Kind.message, LogSQL.isMessage in Sources/SpotterCore/Chat/LogSQL.swift).
MESSAGE_KIND=0
read -r CURSOR EXPECTED < <(sqlite3 -separator ' ' "$RESTART_DB/spotter.sqlite" \
    "SELECT pos, (SELECT COUNT(*) FROM log WHERE threadNo = $CHECK_NO AND kind = $MESSAGE_KIND AND pos > l.pos)
     FROM log l WHERE threadNo = $CHECK_NO AND seq = $FROM_SEQ AND kind = $MESSAGE_KIND") || true
[ -n "${CURSOR:-}" ] || die "thread $CHECK_NO has no message with seq $FROM_SEQ"

# ---------------------------------------------------------------------------
# 2. Startup, RUNS times
# ---------------------------------------------------------------------------

STARTUP_MS=()
RSS_KB=()
HWM_KB=()
STOP_MS=()
status=0
start_server() {  # run number; sets SERVER_PID, RUN_PORT, READY_MS (or returns 1)
    local run=$1 start ready body
    RUN_PORT=${PORT:-$(free_port)} || die "no free port found"
    start=$(now_ms)
    "$SPOTTER" serve --port "$RUN_PORT" --data-dir "$RESTART_DB" --log-level info >>"$RESTART_DB/server.log" 2>&1 &
    SERVER_PID=$!
    while :; do
        body=$(curl -s --max-time 1 -w '\n%{http_code}' "http://127.0.0.1:$RUN_PORT/healthz" 2>/dev/null || true)
        if [[ $body == *'"status":"ok"'* && $body == *$'\n200' ]]; then
            ready=$(now_ms)
            READY_MS=$((ready - start))
            return 0
        fi
        if ! kill -0 "$SERVER_PID" 2>/dev/null; then
            echo "!! run $run: the server exited before serving; its log:" >&2
            tail -20 "$RESTART_DB/server.log" >&2
            wait "$SERVER_PID" 2>/dev/null || true
            SERVER_PID=""
            return 1
        fi
        if [ $(( $(now_ms) - start )) -ge $((STARTUP_TIMEOUT * 1000)) ]; then
            echo "!! run $run: not serving after $STARTUP_TIMEOUT s" >&2
            stop_server
            return 1
        fi
        sleep 0.02
    done
}

echo "== startup: $RUNS runs of \`spotter serve\` on $RESTART_DB ($DB_SIZE)"
for run in $(seq 1 "$RUNS"); do
    if ! start_server "$run"; then
        status=1
        STARTUP_MS+=("failed"); RSS_KB+=("-"); HWM_KB+=("-"); STOP_MS+=("-")
        continue
    fi
    rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$SERVER_PID/status")
    hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$SERVER_PID/status")
    STARTUP_MS+=("$READY_MS"); RSS_KB+=("$rss"); HWM_KB+=("$hwm")
    loaded=$(grep 'chat state loaded' "$RESTART_DB/server.log" | tail -1 | sed 's/.*spotter: //; s/ \[.*//')
    echo "   run $run: serving after $READY_MS ms on port $RUN_PORT; VmRSS $((rss / 1024)) MiB, VmHWM $((hwm / 1024)) MiB; $loaded"
    if [ "$run" -lt "$RUNS" ]; then
        t=$(now_ms); stop_server; STOP_MS+=("$(( $(now_ms) - t ))")
        echo "   run $run: stopped (SIGTERM) in ${STOP_MS[-1]} ms"
    fi
done

# ---------------------------------------------------------------------------
# 3. Resume, on the last run's server
# ---------------------------------------------------------------------------

RESUME="not run"
RESUME_DETAIL=""
if [ -n "$SERVER_PID" ]; then
    B="http://127.0.0.1:$RUN_PORT"
    echo "== resume: $CHECK_EMAIL, thread no $CHECK_NO (lastSeq $CHECK_LASTSEQ), cursor $CURSOR (seq $FROM_SEQ), expecting $EXPECTED messages then live"
    signin=$(curl -s --max-time 10 -X POST -H 'Content-Type: application/json' \
        -d "{\"email\":\"$CHECK_EMAIL\",\"password\":\"$PASSWORD\"}" -w '\n%{http_code}' "$B/v1/auth/signin" || true)
    TOKEN=$(printf '%s' "$signin" | head -n -1 | python3 -c 'import json,sys
try: print(json.load(sys.stdin)["access_token"])
except Exception: pass')
    if [ -z "$TOKEN" ]; then
        RESUME="FAIL"
        RESUME_DETAIL="sign-in failed: $(printf '%s' "$signin" | tr '\n' ' ' | cut -c1-300)"
    else
        curl -sN --max-time 2 -D "$WORK/ws.head" -H "Connection: Upgrade" -H "Upgrade: websocket" -H "Sec-WebSocket-Version: 13" \
            -H "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==" \
            "$B/v1/ws?access_token=$TOKEN&cursor=$CURSOR" > "$WORK/ws.raw" 2>/dev/null || true
        raw_messages=$(grep -ao '"type":"message"' "$WORK/ws.raw" | wc -l)
        raw_live=$(grep -ao '"type":"live"' "$WORK/ws.raw" | wc -l)
        # Decode the frames (server frames are unmasked) and check the order and the seqs.
        verdict=$(python3 - "$WORK/ws.head" "$WORK/ws.raw" "$EXPECTED" "$FROM_SEQ" "$CURSOR" <<'PY'
import json, sys
try: status = open(sys.argv[1], "rb").read().split(b"\r\n", 1)[0].decode(errors="replace").strip()
except OSError: status = "no response"
data = open(sys.argv[2], "rb").read()
expected, from_seq, cursor = int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
events, i = [], 0
while i + 2 <= len(data):
    opcode, n = data[i] & 0x0F, data[i + 1] & 0x7F
    i += 2
    if n == 126: n, i = int.from_bytes(data[i:i + 2], "big"), i + 2
    elif n == 127: n, i = int.from_bytes(data[i:i + 8], "big"), i + 8
    payload, i = data[i:i + n], i + n
    if opcode == 1 and len(payload) == n:
        try: events.append(json.loads(payload))
        except ValueError: events.append({"type": "?unparsable"})
types = [e.get("type") for e in events]
messages = [e for e in events if e.get("type") == "message"]
seqs = [e.get("message", {}).get("seq") for e in messages]
live_at = types.index("live") if "live" in types else -1
ok = (" 101" in status and types[:1] == ["hello"] and live_at > 0
      and all(t != "message" for t in types[live_at + 1:])
      and len(messages) == expected and seqs == list(range(from_seq + 1, from_seq + 1 + expected))
      and all(e.get("cursor", 0) > cursor for e in messages))
summary = f"{status}; frames: " + ", ".join(f"{t}×{types.count(t)}" for t in dict.fromkeys(types)) + f"; message seqs {seqs[:1]}…{seqs[-1:]}"
print(("PASS" if ok else "FAIL") + "|" + summary)
PY
)
        RESUME=${verdict%%|*}
        RESUME_DETAIL="${verdict#*|}; raw: \"type\":\"message\" ×$raw_messages, \"type\":\"live\" ×$raw_live"
    fi
    echo "   $RESUME: $RESUME_DETAIL"
    [ "$RESUME" = PASS ] || status=1
    t=$(now_ms); stop_server; STOP_MS+=("$(( $(now_ms) - t ))")
else
    RESUME="FAIL"
    RESUME_DETAIL="no server running (the last start failed)"
    status=1
fi

# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------

best=""
for ms in "${STARTUP_MS[@]}"; do
    [[ $ms =~ ^[0-9]+$ ]] || continue
    if [ -z "$best" ] || [ "$ms" -gt "$best" ]; then best=$ms; fi   # the slowest run decides
done
if [ -z "$best" ]; then verdict="no run served"
elif [ "$best" -le "$TARGET_MS" ]; then verdict="met (slowest run $best ms ≤ $TARGET_MS ms)"
else verdict="missed (slowest run $best ms > $TARGET_MS ms)"
fi
to_mib() { [[ $1 =~ ^[0-9]+$ ]] && echo "$(( $1 / 1024 )) MiB" || echo "$1"; }

echo
echo "## Restart benchmark — $(date -u +%Y-%m-%dT%H:%M:%SZ)"
echo
echo "Machine: $(nproc) cores, $(uname -sr), load average \`$(cut -d' ' -f1-3 /proc/loadavg)\`. Binary: \`$BIN\` ($("$SPOTTER" --version 2>/dev/null || echo '?'))."
echo "Data: $MESSAGES messages in \`log\`, $USERS users ($COACHES coaches, $CLIENTS clients), $THREADS threads; \`$RESTART_DB\`."
echo "Startups read a warm OS page cache (the database was just built or used)."
echo
echo "| | |"
echo "|---|---|"
echo "| database build | $BUILD_NOTE |"
echo "| database size | $DB_SIZE |"
for i in "${!STARTUP_MS[@]}"; do
    ms=${STARTUP_MS[$i]}
    [[ $ms =~ ^[0-9]+$ ]] && ms="**$ms ms**"
    echo "| start $((i + 1)): process start → /healthz ok | $ms (VmRSS $(to_mib "${RSS_KB[$i]}"), VmHWM $(to_mib "${HWM_KB[$i]}"); stop after SIGTERM ${STOP_MS[$i]:--} ms) |"
done
echo "| target: serving within $TARGET_MS ms | $verdict |"
echo "| resume (cursor $CURSOR, thread $CHECK_NO, seq > $FROM_SEQ) | **$RESUME**: $RESUME_DETAIL |"
exit "$status"
