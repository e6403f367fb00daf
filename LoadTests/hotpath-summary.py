#!/usr/bin/env python3
"""Per-send instruction counts from a callgrind tree of the loop thread (LoadTests/profile-hotpath.sh).

Reads `callgrind_annotate --inclusive=yes --tree=calling FILE | swift demangle --simplified` and prints the
loop thread's total and its top inclusive costs, each divided by the calls of AppSocket.sendMessage (one per
`message.send` of the window). Usage: hotpath-summary.py TREE [TOP] [--per FUNCTION]
(--per: divide by the calls of another function instead, e.g. `AppSocket.opened(on:)` for connects).
"""
import re
import sys

args = sys.argv[1:]
per_function = "AppSocket.sendMessage(_:id:)"
if "--per" in args:
    at = args.index("--per")
    per_function = args[at + 1]
    del args[at:at + 2]
lines = open(args[0]).read().splitlines()
top = int(args[1]) if len(args) > 1 else 40
inclusive = {}  # function -> inclusive instructions (its "*" line)
sends = 0
for line in lines:
    match = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+\*\s+\?\?\?:(.*?) \[", line)
    if match:
        inclusive[match.group(2)] = int(match.group(1).replace(",", ""))
    match = re.match(r"\s*[\d,]+ .*>\s+\?\?\?:" + re.escape(per_function) + r" \(([\d,]+)x\)", line)
    if match:
        sends = max(sends, int(match.group(1).replace(",", "")))
total = next(int(line.split()[0].replace(",", "")) for line in lines if "PROGRAM TOTALS" in line)
per = max(sends, 1)
print(f"loop thread: {total:,} instructions, {sends} calls of {per_function}: {total // per:,} per call (fixed costs included)")
print(f"top {top} inclusive costs of the loop thread, instructions per call:")
for name, cost in sorted(inclusive.items(), key=lambda item: -item[1])[:top]:
    print(f"{cost // per:>9,}  {name[:150]}")
