#!/usr/bin/env python3
"""notify.json and notify.md from the `notify` scenario's runs (LoadTests/notify-load.sh): every run's figures, the
send→ack p99 of the runs with pushes against those without (the spread of the runs without is the noise), the CPU a
push adds, and the target (send→receiver p99 ≤ 1 s). Usage: notify-report.py OUT_DIR ROUNDS [SUFFIX]."""
import json
import os
import statistics
import sys

out_dir, rounds = sys.argv[1], int(sys.argv[2])
suffix = sys.argv[3] if len(sys.argv) > 3 else ""
runs = []
for r in range(1, rounds + 1):
    for mode in ("off", "on"):
        path = os.path.join(out_dir, f"notify-{mode}-{r}{suffix}.json")
        if not os.path.exists(path):
            continue
        data = json.load(open(path))
        t, n = data.get("traffic") or {}, data.get("notify") or {}
        receiver = n.get("receiver") or {}
        latency = n.get("provider_latency") or {}
        runs.append({
            "run": f"{mode}-{r}", "mode": mode, "command": data["command_line"], "load_before": data["load_average_before"],
            "coaches": n.get("coaches"), "offline_clients": n.get("offline_clients"), "devices": n.get("devices_registered"),
            "rate": t.get("target_rate_per_second"), "window_s": t.get("window_seconds"), "sent": t.get("sent"),
            "skipped": t.get("skipped_sends"), "acked_per_s": t.get("acked_per_second"),
            "ack_p50_us": (t.get("ack_latency_micros") or {}).get("p50"), "ack_p99_us": (t.get("ack_latency_micros") or {}).get("p99"),
            "messages_acked": n.get("messages_acked"), "pushes_sent": n.get("pushes_sent"), "pushes_failed": n.get("pushes_failed"),
            "pushes_per_s": n.get("pushes_per_second"), "push_drain_after_window_s": n.get("drain_after_window_seconds"),
            "pushes_drained": n.get("pushes_drained"),
            "provider_p50_at_most_ms": latency.get("p50_at_most_ms"), "provider_p99_at_most_ms": latency.get("p99_at_most_ms"),
            "provider_mean_ms": latency.get("mean_ms"),
            "receiver_p50_ms": (receiver.get("send_to_receiver_ms") or {}).get("p50"),
            "receiver_p99_ms": (receiver.get("send_to_receiver_ms") or {}).get("p99"),
            "receiver_samples": (receiver.get("send_to_receiver_ms") or {}).get("n"),
            "receiver_received": receiver.get("received"), "receiver_sample_ok": receiver.get("sample_ok"),
            "receiver_sampled": receiver.get("sampled"), "receiver_cpu_s": receiver.get("cpu_seconds"),
            "receiver_active_s": receiver.get("active_seconds"), "receiver_peak_per_s": receiver.get("peak_per_second"),
            "server_cpu_s": n.get("server_cpu_seconds"), "server_us_per_message": n.get("server_cpu_micros_per_message"),
            "span_s": n.get("span_seconds"), "errors": (data.get("errors") or {}).get("total"),
        })


def values(mode, key):
    return [run[key] for run in runs if run["mode"] == mode and run.get(key) is not None]


off_p99, on_p99 = values("off", "ack_p99_us"), values("on", "ack_p99_us")
comparison = {}
if off_p99 and on_p99:
    noise = max(off_p99) - min(off_p99) if len(off_p99) > 1 else None
    shift = statistics.median(on_p99) - statistics.median(off_p99)
    comparison = {"off_ack_p99_us": off_p99, "on_ack_p99_us": on_p99, "noise_us": noise, "shift_us": shift,
                  "within_noise": None if noise is None else abs(shift) <= noise}
off_cpu, on_cpu, pushes = values("off", "server_cpu_s"), values("on", "server_cpu_s"), values("on", "pushes_sent")
if off_cpu and on_cpu and pushes and statistics.mean(pushes) > 0:
    comparison["cpu_per_push_us"] = (statistics.mean(on_cpu) - statistics.mean(off_cpu)) * 1e6 / statistics.mean(pushes)
receiver_p99 = values("on", "receiver_p99_ms")
comparison["target_receiver_p99_ms"] = 1000
comparison["target_met"] = bool(receiver_p99) and max(receiver_p99) <= 1000
json.dump({"runs": runs, "comparison": comparison}, open(os.path.join(out_dir, f"notify{suffix}.json"), "w"), indent=2)


def f(value, digits=0):
    return "n/a" if value is None else f"{value:,.{digits}f}"


lines = ["### notify", "",
         "Issue 28 asks for 10,000 offline clients with a Web Push device each and coaches sending 2,000 msgs/s for 30 s. "
         "Runs alternate: **off** (no push provider) and **on** (Web Push to LoadTests/push-receiver.py, "
         "`--push-coalesce 0 --push-preview full`), each on a fresh server with the same traffic.", ""]
if runs:
    first = runs[0]
    lines += [f"What ran: {first['coaches']} coaches online, {first['offline_clients']} clients offline with "
              f"{first['devices']} devices, {f(first['rate'])} msgs/s for {f(first['window_s'], 1)} s. "
              f"Command of the first run: `{first['command']}`", ""]
lines += ["| run | acked/s | send→ack p50 / p99 µs | pushes sent | pushes/s | outbox→provider p50 / p99 (bucket ≤) ms | "
          "send→receiver p50 / p99 ms (n) | server CPU s (µs/msg) | receiver CPU s / arrivals s | errors |",
          "|---|---|---|---|---|---|---|---|---|---|"]
for run in runs:
    on = run["mode"] == "on"
    lines.append(
        f"| {run['run']} | {f(run['acked_per_s'])} | {f(run['ack_p50_us'])} / {f(run['ack_p99_us'])} | "
        + (f"{f(run['pushes_sent'])} of {f(run['messages_acked'])}{'' if run['pushes_drained'] else ' (not all)'} | {f(run['pushes_per_s'])} | "
           f"{f(run['provider_p50_at_most_ms'])} / {f(run['provider_p99_at_most_ms'])} (mean {f(run['provider_mean_ms'], 1)}) | "
           f"{f(run['receiver_p50_ms'])} / {f(run['receiver_p99_ms'])} ({f(run['receiver_samples'])}) | "
           if on else "– | – | – | – | ")
        + f"{f(run['server_cpu_s'], 1)} ({f(run['server_us_per_message'], 1)}) | "
        + (f"{f(run['receiver_cpu_s'], 1)} / {f(run['receiver_active_s'], 1)} | " if on else "– | ")
        + f"{run['errors']} |")
c = comparison
lines.append("")
if "shift_us" in c:
    lines.append(f"- Chat (coaches' send→ack) p99 off: {c['off_ack_p99_us']} µs, on: {c['on_ack_p99_us']} µs; median shift "
                 f"{f(c['shift_us'])} µs against a noise (spread of the off runs) of {f(c['noise_us'])} µs: "
                 + ("**within the noise**" if c["within_noise"] else "**beyond the noise**" if c["within_noise"] is False
                    else "one off run only, no noise measured") + ".")
if "cpu_per_push_us" in c:
    lines.append(f"- CPU per push (server CPU on − off, over pushes sent): **{f(c['cpu_per_push_us'], 1)} µs**.")
lines.append(f"- Target send→receiver p99 ≤ 1 s (send stamp → arrival, an upper bound of commit → receiver): "
             + ("**met**" if c["target_met"] else "**not met**") + f" (p99 of the on runs: {receiver_p99} ms).")
open(os.path.join(out_dir, f"notify{suffix}.md"), "w").write("\n".join(lines) + "\n")
print("\n".join(lines))
