#!/usr/bin/env bash
# libFuzzer over the parsers that read untrusted bytes (Tests/Fuzz/README.md):
#   http-head  HTTPRequestParser, the handshake check        (WebSocket module)
#   frame      WebSocketSession, FrameReader, UTF8Validator  (WebSocket module)
#   command    SocketCommand.decode, request bodies, replies (SpotterProtocol module)
# Each target is its module's sources compiled together with one harness from Tests/Fuzz/
# (swiftc -sanitize=fuzzer,address, not SwiftPM, so a running `swift build` is not disturbed),
# then run for FUZZ_SECONDS (default 60), one target after another, one job each.
#
#   Tests/scripts/fuzz.sh                         all three, 60 s each
#   FUZZ_SECONDS=3600 Tests/scripts/fuzz.sh       a long run
#   FUZZ_TARGETS=frame Tests/scripts/fuzz.sh      one target
#   FUZZ_ARGS=-len_control=0 ...                  extra libFuzzer flags
#
# Under .build/fuzz/: bin/ (the fuzzers), seeds/ (cut from Protocol/examples each run),
# corpus/<target>/ (kept between runs and grown by them), artifacts/<target>/ (crash-*, leak-*,
# timeout-*, oom-* inputs), logs/. Fails if a target finds a crash, leak, timeout or OOM, or if a
# saved reproducer in Tests/Fuzz/regressions/<target>/ still fails.
set -euo pipefail
cd "$(dirname "$0")/../.."

FUZZ_SECONDS=${FUZZ_SECONDS:-60}
FUZZ_TARGETS=${FUZZ_TARGETS:-http-head frame command}
FUZZ_ARGS=${FUZZ_ARGS:-}  # more libFuzzer flags, e.g. "-len_control=0" on long runs
OUT=.build/fuzz
# Crashes are reported by libFuzzer and ASan. Swift's own backtracer would run as well and can
# hang on to the fuzzer's output, so it is turned off.
export SWIFT_BACKTRACE=enable=no

mkdir -p "$OUT/bin" "$OUT/logs"

# The module a target belongs to, its sources and the harness.
module_of() { case "$1" in http-head | frame) echo WebSocket ;; command) echo SpotterProtocol ;; *) return 1 ;; esac; }
harness_of() {
    case "$1" in
        http-head) echo Tests/Fuzz/HTTPHeadFuzz.swift ;;
        frame) echo Tests/Fuzz/FrameFuzz.swift ;;
        command) echo Tests/Fuzz/CommandFuzz.swift ;;
    esac
}
# WebSocket uses Base64Codec: its sources are compiled into the same module (Handshake.swift imports it only
# when it is a module of its own).
sources_of() {
    local module
    module=$(module_of "$1")
    { find "Sources/$module" -name '*.swift'; [ "$module" = WebSocket ] && find Sources/Base64Codec -name '*.swift'; } | LC_ALL=C sort
}

build() {
    local target=$1 bin="$OUT/bin/$1" module harness
    module=$(module_of "$target")
    harness=$(harness_of "$target")
    local inputs=("$harness" Tests/Fuzz/FuzzSupport.swift $(sources_of "$target"))
    local extra=()
    [ "$module" = WebSocket ] && extra=(-I Sources/COpenSSL -lcrypto)
    if [ -x "$bin" ] && [ -z "$(find "${inputs[@]}" "$0" -newer "$bin" 2>/dev/null | head -1)" ]; then
        echo "fuzz: $target: up to date"
        return 0
    fi
    echo "fuzz: $target: building ($module + $harness)"
    # lld (shipped with the Swift toolchain) links without gold's page of ASan warnings.
    command -v ld.lld >/dev/null 2>&1 && extra+=(-use-ld=lld)
    swiftc -sanitize=fuzzer,address -parse-as-library -O -g -module-name "$module" \
        "${inputs[@]}" "${extra[@]}" -o "$bin.tmp" >"$OUT/logs/$target-build.log" 2>&1 \
        && mv "$bin.tmp" "$bin"
}

echo "fuzz: seeds from Protocol/examples"
rm -rf "$OUT/seeds"
python3 Tests/Fuzz/extract_seeds.py Protocol/examples "$OUT/seeds"

passed=0
failed=0
for target in $FUZZ_TARGETS; do
    if ! module_of "$target" >/dev/null; then
        echo "fuzz: $target: no such target (http-head, frame, command)" >&2
        failed=$((failed + 1))
        continue
    fi
    if ! build "$target"; then
        echo "fuzz: $target: build failed" >&2
        tail -30 "$OUT/logs/$target-build.log" >&2
        failed=$((failed + 1))
        continue
    fi
    bin="$OUT/bin/$target"
    corpus="$OUT/corpus/$target"
    artifacts="$OUT/artifacts/$target"
    log="$OUT/logs/$target.log"
    mkdir -p "$corpus" "$artifacts"

    # Saved reproducers first: each must now run clean.
    regressions=()
    if [ -d "Tests/Fuzz/regressions/$target" ]; then
        while IFS= read -r -d '' file; do regressions+=("$file"); done \
            < <(find "Tests/Fuzz/regressions/$target" -type f ! -name '*.md' -print0 | LC_ALL=C sort -z)
    fi
    if [ ${#regressions[@]} -gt 0 ]; then
        if ! "$bin" -rss_limit_mb=2048 -timeout=10 "${regressions[@]}" >"$OUT/logs/$target-regressions.log" 2>&1; then
            echo "fuzz: $target: a saved reproducer in Tests/Fuzz/regressions/$target fails again" >&2
            grep -E 'Running:|ERROR|Fatal error|SUMMARY|^    #' "$OUT/logs/$target-regressions.log" | head -40 >&2
            failed=$((failed + 1))
            continue
        fi
    fi

    seeds=("$OUT/seeds/$target")
    [ -d "Tests/Fuzz/seeds/$target" ] && seeds+=("Tests/Fuzz/seeds/$target")
    [ -d "Tests/Fuzz/regressions/$target" ] && seeds+=("Tests/Fuzz/regressions/$target")
    dict=()
    [ -f "Tests/Fuzz/dicts/$target.dict" ] && dict=("-dict=Tests/Fuzz/dicts/$target.dict")

    echo "fuzz: $target: running ${FUZZ_SECONDS}s"
    status=0
    "$bin" -max_total_time="$FUZZ_SECONDS" -rss_limit_mb=2048 -max_len=65536 -timeout=10 \
        -artifact_prefix="$artifacts/" -print_final_stats=1 "${dict[@]}" $FUZZ_ARGS \
        "$corpus" "${seeds[@]}" >"$log" 2>&1 || status=$?

    runs=$(grep -oE 'stat::number_of_executed_units: [0-9]+' "$log" | grep -oE '[0-9]+$' | tail -1 || true)
    [ -n "$runs" ] || runs=$(grep -oE '^#[0-9]+' "$log" | tail -1 | tr -d '#' || true)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+' "$log" | tail -1 || true)
    crashes=$(grep -cE 'Test unit written to .*/(crash|leak|timeout|oom)-' "$log" || true)
    if [ "$status" -ne 0 ] && [ "$crashes" -eq 0 ]; then crashes=1; fi  # died without saving an input
    echo "fuzz: $target: ${runs:-0} runs, $crashes crashes (${cov:-no coverage reported}, ${FUZZ_SECONDS}s)"
    if [ "$status" -eq 0 ] && [ "$crashes" -eq 0 ]; then
        passed=$((passed + 1))
    else
        failed=$((failed + 1))
        echo "fuzz: $target: FAILED (exit $status); log: $log" >&2
        grep -E 'Test unit written to|ERROR|Fatal error|SUMMARY|^    #[0-9]' "$log" | head -40 >&2 || true
    fi
done

echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
