#!/usr/bin/env python3
"""Reads `perf script` output (perf record -g) of one server and prints, for the thread TID (the loop: the
server's PID), the runs of back-to-back samples that look like one long stretch of work (a stall), each with
the functions most often on its stacks; and, with --under NAME, what the samples whose stack holds NAME spent
their time in (the callees, inclusive).

  perf script -i perf.data -F tid,time,ip,sym | swift demangle --simplified > stacks.txt
  LoadTests/perf-stalls.py stacks.txt --tid PID [--gap-ms 4] [--min-ms 10] [--under Server.sweep] [--bursts Server.sweep]

A run is a sequence of the thread's samples no more than --gap-ms apart (at -F 499 a busy thread is sampled
every ~2 ms); one longer than --min-ms is printed. Wall-clock runs include time the thread was busy in the
kernel (sends, fsyncs of its own) but not time it waited."""
import argparse, collections, re, sys

def samples(path, tid):
    head = re.compile(r"^\s*(\d+)\s+([\d.]+):")
    current = None
    for line in open(path, errors="replace"):
        match = head.match(line)
        if match:
            if current and current[0] == tid: yield current[1], current[2]
            current = (int(match.group(1)), float(match.group(2)), [])
        elif line.strip() and current is not None:
            parts = line.strip().split(None, 1)
            current[2].append(parts[1] if len(parts) > 1 else parts[0])
    if current and current[0] == tid: yield current[1], current[2]

def useful(frame):
    return not (frame.startswith("[") or frame.startswith("0x") or "[unknown]" in frame)

def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("stacks")
    parser.add_argument("--tid", type=int, required=True)
    parser.add_argument("--gap-ms", type=float, default=4)
    parser.add_argument("--min-ms", type=float, default=10)
    parser.add_argument("--under", action="append", default=[])
    parser.add_argument("--top", type=int, default=8)
    parser.add_argument("--bursts", action="append", default=[],
                        help="NAME: the samples with NAME on the stack grouped into bursts (gaps under 100 ms): one "
                             "burst per call of a periodic job, its samples × the period ≈ its CPU time")
    args = parser.parse_args()
    all_samples = list(samples(args.stacks, args.tid))
    if not all_samples:
        print("no samples for that thread"); return
    print(f"{len(all_samples)} samples of thread {args.tid} over {all_samples[-1][0] - all_samples[0][0]:.1f} s")
    runs, run = [], [all_samples[0]]
    for sample in all_samples[1:]:
        if (sample[0] - run[-1][0]) * 1000 <= args.gap_ms: run.append(sample)
        else: runs.append(run); run = [sample]
    runs.append(run)
    long_runs = [r for r in runs if (r[-1][0] - r[0][0]) * 1000 >= args.min_ms]
    print(f"runs of samples ≤ {args.gap_ms} ms apart lasting ≥ {args.min_ms} ms: {len(long_runs)}")
    for r in sorted(long_runs, key=lambda r: r[0][1] and r[0][0]):
        counts = collections.Counter()
        for _, stack in r:
            for frame in set(f for f in stack if useful(f)): counts[frame] += 1
        top = "; ".join(f"{name[:70]} {100 * n // len(r)}%" for name, n in counts.most_common(args.top)
                        if "main" not in name and "uv_run" not in name)
        print(f"  t={r[0][0]:.3f} {1000 * (r[-1][0] - r[0][0]):.1f} ms, {len(r)} samples: {top}")
    for name in args.bursts:
        times = [t for t, stack in all_samples if any(name in f for f in stack)]
        bursts = []
        for t in times:
            if bursts and t - bursts[-1][-1] < 0.1: bursts[-1].append(t)
            else: bursts.append([t])
        sizes = sorted(len(b) for b in bursts)
        print(f"\n{name}: {len(times)} samples in {len(bursts)} bursts; samples per burst (sorted): {sizes}; "
              f"spans ms: {sorted(round(1000 * (b[-1] - b[0]), 1) for b in bursts)}")
    for name in args.under:
        under = [stack for _, stack in all_samples if any(name in f for f in stack)]
        print(f"\nsamples with {name} on the stack: {len(under)} of {len(all_samples)}")
        counts = collections.Counter()
        for stack in under:
            index = next(i for i, f in enumerate(stack) if name in f)
            for frame in set(stack[:index]): counts[frame] += 1
        for frame, n in counts.most_common(25):
            print(f"  {100 * n / len(under):5.1f}%  {frame[:150]}")

main()
