# Sourced by profile-hotpath.sh and profile-connect.sh: starts one `spotter serve` under callgrind with
# instrumentation off, an admin made first, and waits for its port. Needs SERVER_SRC, OUT and IDLE_TIMEOUT;
# sets SERVER (the stripped copy), PASSWORD (the admin's), PORT and PID, and an EXIT trap that kills it.
#
# Valgrind 3.19 cannot read Swift 6.3's DWARF: the server is copied with its debug sections stripped
# (objcopy --strip-debug keeps the symbol table, so functions keep their names).
rm -rf "$OUT"
mkdir -p "$OUT/data"
SERVER="$OUT/spotter-nodebug"
objcopy --strip-debug "$SERVER_SRC" "$SERVER"
PASSWORD="profile-$RANDOM$RANDOM"
SPOTTER_ADMIN_PASSWORD="$PASSWORD" "$SERVER" admin create-admin --data-dir "$OUT/data" \
    --email admin@load.test --full-name Load >/dev/null
PORT=$((20000 + RANDOM % 30000))
valgrind --tool=callgrind --instr-atstart=no --separate-threads=yes \
    --callgrind-out-file="$OUT/callgrind.out.%p" \
    "$SERVER" serve --port "$PORT" --data-dir "$OUT/data" --log-level warning --idle-timeout "$IDLE_TIMEOUT" \
    --load-test-provisioning >"$OUT/server.log" 2>&1 &
PID=$!
trap 'kill $PID 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then break; fi
    sleep 0.1
done
echo "load before: $(cat /proc/loadavg)" | tee "$OUT/loadavg"
