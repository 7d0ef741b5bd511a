#!/usr/bin/env bash
# `retrace watch --json` on a native journal that grows by RATE events a
# second for SECONDS seconds (default 10,000/s for 60 s).
#
#   benches/watch.sh [SECONDS] [RATE]
#
# RETRACE=path/to/retrace runs another build of retrace (an older one, to
# compare) on the same journal.
#
# The events come from `cargo run --release --example gen_journal` (many
# sessions and tools, a few percent repeats of every kind), generated into
# target/bench-data/ (never committed) and appended to a journal there in
# batches every 10 ms. Reported:
#
# * latency: from the moment a duplicate's second dispatch was written to
#   the journal to the moment its line (the group's first high or critical
#   change) was read from retrace's stdout: median, p95, max, and how many;
# * retrace's average CPU over the run (utime + stime from /proc, as a
#   share of one core) and its RSS when following began, every 10 s of
#   appending, and at the end (flat memory: the figures do not grow with
#   the run);
# * whether the appender kept the rate.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-60}
rate=${2:-10000}
events=$((seconds * rate))
data=target/bench-data
src=$data/watch-src-$events.jsonl
journal=$data/watch-live.jsonl
mkdir -p "$data"
cargo build --release --quiet --bin retrace --example gen_journal
if [ ! -s "$src" ]; then
  echo "generating $src ..." >&2
  ./target/release/examples/gen_journal "$events" > "$src.tmp"
  mv "$src.tmp" "$src"
fi
: > "$journal"
echo "$(date -u +%FT%TZ) on $(nproc) cores: $events events at $rate/s into $journal" >&2

exe=${RETRACE:-./target/release/retrace}
echo "retrace: $exe" >&2

python3 - "$src" "$journal" "$rate" "$exe" <<'PY'
import json, os, subprocess, sys, threading, time

src, journal, rate, exe = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
lines = open(src, "rb").read().splitlines(keepends=True)
hz = os.sysconf("SC_CLK_TCK")

def cpu(pid):
    with open(f"/proc/{pid}/stat") as f:
        parts = f.read().rsplit(")", 1)[1].split()
    return (int(parts[11]) + int(parts[12])) / hz

def rss(pid):
    with open(f"/proc/{pid}/status") as f:
        for l in f:
            if l.startswith("VmRSS:"):
                return int(l.split()[1]) / 1024
    return 0.0

p = subprocess.Popen(
    [exe, "watch", journal, "--json", "--interval", "200ms"],
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "NO_COLOR": "1"},
)
seen = []  # (time read, object)
def read_out():
    for l in p.stdout:
        seen.append((time.monotonic(), l))
def read_err():
    for l in p.stderr:
        pass
threading.Thread(target=read_out, daemon=True).start()
threading.Thread(target=read_err, daemon=True).start()
time.sleep(1.0)
rss_start = rss(p.pid)
cpu_start, t_start = cpu(p.pid), time.monotonic()

written = [0.0] * (len(lines) + 1)  # line number -> when written
batch = max(1, rate // 100)
out = open(journal, "ab", buffering=0)
i = 0
begin = time.monotonic()
rss_over_time = []  # (seconds since appending began, MiB)
next_sample = 10.0
while i < len(lines):
    if time.monotonic() - begin >= next_sample:
        rss_over_time.append((next_sample, rss(p.pid)))
        next_sample += 10.0
    due = begin + i / rate
    now = time.monotonic()
    if due > now:
        time.sleep(due - now)
    chunk = lines[i:i + batch]
    out.write(b"".join(chunk))
    t = time.monotonic()
    for k in range(len(chunk)):
        written[i + k + 1] = t
    i += len(chunk)
append_wall = time.monotonic() - begin
time.sleep(3.0)  # let the last polls come through
cpu_end, t_end = cpu(p.pid), time.monotonic()
rss_end = rss(p.pid)
p.send_signal(2)
p.wait(timeout=30)

# Where each execution was dispatched: the line a duplicate's second
# dispatch is on.
dispatch_line = {}
for no, l in enumerate(lines, 1):
    if b'"dispatched"' in l:
        dispatch_line[json.loads(l)["execution_id"]] = no
lat = []
changes = 0
for t, l in seen:
    changes += 1
    o = json.loads(l)
    if o["severity"] in ("critical", "high") and o["previous_verdict"] is None:
        ids = o["execution_ids"]
        line = dispatch_line.get(ids[1]) if len(ids) > 1 else None
        if line and written[line] > 0:
            lat.append((t - written[line]) * 1000)
lat.sort()
def pct(q):
    return lat[min(len(lat) - 1, int(q * len(lat)))] if lat else float("nan")
print(f"appended {len(lines)} lines in {append_wall:.1f} s ({len(lines) / append_wall:.0f}/s; target {rate}/s)")
print(f"changes printed: {changes}; duplicates at their second dispatch: {len(lat)}")
print(f"latency dispatch written -> line on stdout: median {pct(0.5):.0f} ms, p95 {pct(0.95):.0f} ms, max {lat[-1] if lat else float('nan'):.0f} ms")
print(f"retrace CPU: {100 * (cpu_end - cpu_start) / (t_end - t_start):.0f}% of one core on average")
print(f"retrace RSS: {rss_start:.0f} MiB when following began, {rss_end:.0f} MiB at the end")
print("retrace RSS over time: " + ", ".join(f"{t:.0f} s {m:.0f} MiB" for t, m in rss_over_time))
print(f"exit status on SIGINT: {p.returncode}")
PY
