# The `notify` scenario of run-load.sh (issue 28), sourced by it: uses its make_store, start_servers, run_generator,
# stop_servers, OUT_DIR, DATA_DIR, SERVER_PIDS and status. Not in the default list (about 1.5 minutes a run).
#
# NOTIFY_ROUNDS rounds [2] of two runs each, alternating, each on a fresh server and store with the same traffic:
#   off  the server has no push provider: the coaches' messages make no pushes
#   on   the server pushes through Web Push (--push-coalesce 0: every message its own push, --push-preview full:
#        the body is the message's text, which starts with spotter-load's send stamp) to LoadTests/push-receiver.py,
#        a local HTTP/2-over-TLS Web Push service that answers 201 to all and verifies and decrypts 1 in NOTIFY_SAMPLE
# NOTIFY_COACHES [200] coaches online send NOTIFY_RATE [2000] msgs/s for NOTIFY_DURATION [30] s (after 3 s warm-up),
# round robin over their NOTIFY_CLIENTS [50] clients each (offline, one Web Push device each: 10,000 by default).
# The off runs' spread is the noise against which the on runs' send→ack p99 is read. NOTIFY_COALESCE [0].
# Results: notify-<off|on>-<round>.{json,md,out} and notify.json / notify.md (every run and the comparison).
NOTIFY_ROUNDS=${NOTIFY_ROUNDS:-2}
NOTIFY_COACHES=${NOTIFY_COACHES:-200}
NOTIFY_CLIENTS=${NOTIFY_CLIENTS:-50}
NOTIFY_RATE=${NOTIFY_RATE:-2000}
NOTIFY_DURATION=${NOTIFY_DURATION:-30}
NOTIFY_SAMPLE=${NOTIFY_SAMPLE:-10}
NOTIFY_COALESCE=${NOTIFY_COALESCE:-0}
RECEIVER_PID=""

stop_receiver() {
    [ -n "$RECEIVER_PID" ] || return 0
    kill "$RECEIVER_PID" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$RECEIVER_PID" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$RECEIVER_PID" 2>/dev/null || true
    wait "$RECEIVER_PID" 2>/dev/null || true
    RECEIVER_PID=""
}

# start_receiver DIR BOUND: push-receiver.py in the background (RECEIVER_PID), its first line in RECEIVER_JSON.
start_receiver() {
    PYTHONPATH="$ROOT/.build/push-python${PYTHONPATH:+:$PYTHONPATH}" python3 "$ROOT/LoadTests/push-receiver.py" --detached \
        --sample "$NOTIFY_SAMPLE" --stats-file "$1/receiver.json" --max-seconds "$2" </dev/null >"$1/receiver.out" 2>"$1/receiver.err" &
    RECEIVER_PID=$!
    for _ in $(seq 1 100); do
        RECEIVER_JSON=$(head -1 "$1/receiver.out" 2>/dev/null)
        [ -z "$RECEIVER_JSON" ] || return 0
        kill -0 "$RECEIVER_PID" 2>/dev/null || break
        sleep 0.1
    done
    echo "push-receiver.py did not start:" >&2
    cat "$1/receiver.err" >&2
    return 1
}

run_notify() {
    local round mode bound=400 vapid keys s result
    keys=$(mktemp -d /tmp/spotter-notify-keys.XXXXXX)
    vapid="$keys/vapid.pem"
    openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$vapid" 2>/dev/null
    # The subscription keys every device shares: the first receiver's (each receiver makes its own, so each on run
    # registers the keys of its own receiver).
    for round in $(seq 1 "$NOTIFY_ROUNDS"); do
        for mode in off on; do
            result=notify-$mode-$round$RESULT_SUFFIX
            echo "== $result (load: $(cat /proc/loadavg))"
            make_store "$LOAD_STORE"
            local opts=(--development --push-coalesce "$NOTIFY_COALESCE" --push-preview full) gen=()
            start_receiver "$DATA_DIR" "$bound" || { status=1; stop_servers; continue; }
            field() { python3 -c 'import json, sys; d = json.loads(sys.argv[1]); print(eval("d" + sys.argv[2]))' "$RECEIVER_JSON" "$1"; }
            gen=(--webpush-endpoint-base "$(field '["subscription"]["endpoint_base"]')" \
                 --webpush-p256dh "$(field '["subscription"]["p256dh"]')" --webpush-auth "$(field '["subscription"]["auth"]')")
            if [ "$mode" = on ]; then
                opts+=(--webpush-vapid-key "$vapid" --webpush-subject mailto:load@spotter.test --push-ca-file "$(field '["ca"]')")
                gen+=(--expect-pushes --receiver-stats "$DATA_DIR/receiver.json")
            else
                stop_receiver  # the off run registers the same kind of devices but has nowhere to push
            fi
            # A free port can be taken between the check and the bind (the device registrations' thousands of
            # connections use ephemeral ports in the same range): up to three tries.
            local up=0 try
            for try in 1 2 3; do
                if start_servers 1 "${opts[@]}"; then up=1; break; fi
                SERVER_PIDS=(); PORTS=()
            done
            if [ "$up" -ne 1 ]; then status=1; stop_receiver; stop_servers; continue; fi
            s=0
            run_generator "$result" notify "$bound" --coaches "$NOTIFY_COACHES" --clients-per-coach "$NOTIFY_CLIENTS" \
                --rate "$NOTIFY_RATE" --duration "$NOTIFY_DURATION" --warmup 3 --grace 10 "${gen[@]}" || s=$?
            cat "$OUT_DIR/$result.out"
            if ! kill -0 "${SERVER_PIDS[0]}" 2>/dev/null; then
                echo "the server exited during $result; its log:" >&2
                tail -20 "$DATA_DIR/server-1.log" >&2 || true
                s=1
            fi
            stop_receiver
            stop_servers
            if [ "$s" -ne 0 ]; then echo "!! $result: exit status $s" >&2; status=1; fi
        done
    done
    rm -rf "$keys"
    python3 "$ROOT/LoadTests/notify-report.py" "$OUT_DIR" "$NOTIFY_ROUNDS" "$RESULT_SUFFIX" || status=1
}
