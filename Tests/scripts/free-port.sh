#!/usr/bin/env bash
# Prints a TCP port on 127.0.0.1 that nothing listens on, below the kernel's
# ephemeral range: a port in that range may be the local end of some client's
# connection (a benchmark's curl), and binding it then fails with EADDRINUSE.
low=$(cut -f1 /proc/sys/net/ipv4/ip_local_port_range 2>/dev/null || echo 32768)
[ "$low" -gt 21000 ] || low=32768
for _ in $(seq 1 100); do
    port=$((20000 + RANDOM % (low - 20000)))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
        echo "$port"
        exit 0
    fi
done
echo "free-port: none found" >&2
exit 1
