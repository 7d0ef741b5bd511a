#!/usr/bin/env bash
# retrace against baselines, measured in the same run, one table.
#
#   benches/compare.sh [--runs N] [--quick] [--only NAME[,NAME…]] [--timeout S] [--list]
#
#   --runs N      runs of every command (default 3); the table shows medians
#   --quick       the 1M-event journals only, one run
#   --only NAME   only these rows (comma-separated; shell patterns such as
#                 'groups-*' work); --list prints the rows
#   --timeout S   a run that takes longer is stopped (default 600); the
#                 command is not run again, and its row fails
#
# Journals are generated under target/bench-data/ when missing (never
# committed) and reused: 1M and 10M chained native events, and a journal
# whose 1M events are one intent repeated 200,000 times (examples/
# chained_journal.rs; deterministic). The 10M journal takes about 4 GB.
# DuckDB comes from PyPI, pinned, in a virtualenv under target/bench-venv.
#
# In every round each selected command runs once, retrace's and the
# baselines in turn, so drift in machine speed hits both alike; wall time
# is taken around each process, peak memory (max RSS) from GNU time.
# Ratios are of medians.
# Nothing here is a test: the PASS/FAIL column compares with the targets
# of the performance issue.
set -euo pipefail
cd "$(dirname "$0")/.."

DUCKDB_VERSION=2.0.1
RUNS=3
QUICK=0
ONLY=""
TIMEOUT=600
LIST=0
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) RUNS=${2:?--runs needs a number}; shift 2 ;;
    --runs=*) RUNS=${1#--runs=}; shift ;;
    --quick) QUICK=1; shift ;;
    --only) ONLY=${2:?--only needs a row name}; shift 2 ;;
    --only=*) ONLY=${1#--only=}; shift ;;
    --timeout) TIMEOUT=${2:?--timeout needs seconds}; shift 2 ;;
    --timeout=*) TIMEOUT=${1#--timeout=}; shift ;;
    --list) LIST=1; shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "compare.sh: unknown argument $1 (see --help)" >&2; exit 2 ;;
  esac
done
[ "$QUICK" = 1 ] && RUNS=1
case "$RUNS" in ''|*[!0-9]*|0) echo "compare.sh: --runs takes a positive number" >&2; exit 2 ;; esac
case "$TIMEOUT" in ''|*[!0-9]*|0) echo "compare.sh: --timeout takes a positive number of seconds" >&2; exit 2 ;; esac

DATA=target/bench-data
VENV=target/bench-venv
RES=$DATA/results
J1=$DATA/chained-1000000.jsonl
J10=$DATA/chained-10000000.jsonl
J200=$DATA/one-intent-200000.jsonl
RETRACE=./target/release/retrace
GIB=1048576 # KiB

# ---------------------------------------------------------------- rows
# name;work;retrace job;baseline job;targets;needs the 10M journal (1) or not (0)
# Targets: ratio:R (retrace ≤ R × baseline), rss:base (retrace peak memory
# ≤ the baseline's), rss:KIB (≤ that many KiB), abs:SECONDS (retrace ≤
# that), none (a reference, no target).
ROWS=(
  "groups-1m;groups --json, 1M events;g1;duck1;ratio:0.5 rss:base;0"
  "groups-1m-jq;groups --json, 1M events (jq, sort, uniq -c);g1;jq1;none;0"
  "verify-1m;verify, 1M events (openssl dgst -sha256);v1;ssl1;ratio:1.0;0"
  "groups-10m;groups --json, 10M vs 1M events;g10;g1;ratio:10.5 rss:$GIB;1"
  "investigate-10m;investigate --group, 10M vs 1M events;i10;i1;ratio:10.5 rss:$GIB;1"
  "export-10m;export --group (markdown), 10M vs 1M events;e10;e1;ratio:10.5 rss:$GIB;1"
  "verify-10m;verify, 10M vs 1M events;v10;v1;ratio:10.5 rss:$GIB;1"
  "investigate-10m-groups;investigate --group vs groups, 10M events;i10;g10;ratio:1.5;1"
  "export-10m-groups;export --group vs groups, 10M events;e10;g10;ratio:1.5;1"
  "export-200k;export one group of 200k calls vs groups, same file;e200;g200;abs:2;0"
  "tui-verdicts;TUI verdicts on screen, 1M (DuckDB GROUP BY);tui:data;duck1;ratio:1.0;0"
  "tui-first-frame;TUI first frame (empty frame);tui:first;tui:empty;abs:0.050;0"
  "tui-key-p99;TUI key to frame p99 (empty frame);tui:p99;tui:empty;abs:0.016;0"
  "tui-10m;TUI verdicts on screen, 10M vs 1M events (in tmux);tt10;tt1;ratio:10.5 rss:$GIB;1"
)
field() { local IFS=';' f; read -r -a f <<< "$1"; echo "${f[$2]}"; }

if [ "$LIST" = 1 ]; then
  for r in "${ROWS[@]}"; do printf '%-24s %s\n' "$(field "$r" 0)" "$(field "$r" 1)"; done
  exit 0
fi

selected=()
for r in "${ROWS[@]}"; do
  name=$(field "$r" 0)
  [ "$QUICK" = 1 ] && [ "$(field "$r" 5)" = 1 ] && continue
  if [ -n "$ONLY" ]; then
    keep=0
    IFS=',' read -r -a pats <<< "$ONLY"
    for p in "${pats[@]}"; do
      # shellcheck disable=SC2053
      [[ $name == $p ]] && keep=1
    done
    [ "$keep" = 1 ] || continue
  fi
  selected+=("$r")
done
if [ ${#selected[@]} -eq 0 ]; then
  echo "compare.sh: no row matches '${ONLY}' (see --list)" >&2
  exit 2
fi

# The jobs the selected rows need, in row order: retrace's, then its baseline.
jobs=()
add_job() {
  local j=${1%%:*} x
  for x in "${jobs[@]+"${jobs[@]}"}"; do [ "$x" = "$j" ] && return 0; done
  jobs+=("$j")
}
for r in "${selected[@]}"; do add_job "$(field "$r" 2)"; add_job "$(field "$r" 3)"; done
needs() { local x; for x in "${jobs[@]}"; do [ "$x" = "$1" ] && return 0; done; return 1; }
needs_any() { local j; for j in "$@"; do needs "$j" && return 0; done; return 1; }

# ---------------------------------------------------------------- tools
note() { echo "note: $*" >&2; }
apt_updated=0
apt_install() { # PACKAGE: installs it with apt when that can be done here
  command -v apt-get > /dev/null 2>&1 || return 1
  local sudo=""
  [ "$(id -u)" = 0 ] || sudo="sudo -n"
  if [ "$apt_updated" = 0 ]; then
    $sudo apt-get update -qq > /dev/null 2>&1 || return 1
    apt_updated=1
  fi
  $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$1" > /dev/null 2>&1
}

GNU_TIME=/usr/bin/time
if ! "$GNU_TIME" -f %M true > /dev/null 2>&1; then
  echo "installing GNU time (apt) ..." >&2
  apt_install time || true
fi
if ! "$GNU_TIME" -f %M true > /dev/null 2>&1; then
  note "GNU time (/usr/bin/time) is not installed and could not be; peak memory is not measured"
  GNU_TIME=""
fi
if needs jq1 && ! command -v jq > /dev/null 2>&1; then
  echo "installing jq (apt) ..." >&2
  apt_install jq || true
fi
if needs jq1 && ! command -v jq > /dev/null 2>&1; then
  note "jq is not installed and could not be; the jq reference row is skipped"
fi
if needs_any tt1 tt10 && ! command -v tmux > /dev/null 2>&1; then
  echo "installing tmux (apt) ..." >&2
  apt_install tmux || true
fi
if needs_any tt1 tt10 && { ! command -v tmux > /dev/null 2>&1 || [ -z "$GNU_TIME" ]; }; then
  note "tmux or GNU time is missing; the TUI-in-tmux row is skipped"
fi
if needs_any v1 v10 ssl1 && ! command -v openssl > /dev/null 2>&1; then
  echo "installing openssl (apt) ..." >&2
  apt_install openssl || true
fi
if needs ssl1 && ! command -v openssl > /dev/null 2>&1; then
  note "openssl is not installed and could not be; verify-1m has no baseline"
fi

PY=$VENV/bin/python
if needs duck1; then
  if ! "$PY" -c "import duckdb, sys; sys.exit(duckdb.__version__ != '$DUCKDB_VERSION')" > /dev/null 2>&1; then
    echo "installing DuckDB $DUCKDB_VERSION into $VENV ..." >&2
    if [ ! -x "$PY" ]; then
      python3 -m venv "$VENV" 2> /dev/null || { rm -rf "$VENV"; apt_install python3-venv || true; python3 -m venv "$VENV"; }
    fi
    "$PY" -m pip install --quiet --disable-pip-version-check "duckdb==$DUCKDB_VERSION"
  fi
fi

# ---------------------------------------------------------------- build
echo "building retrace (release) ..." >&2
cargo build --release --locked --quiet --bin retrace --example chained_journal
if needs tui; then
  cargo bench --locked --quiet --bench tui --no-run 2> /dev/null \
    || cargo bench --locked --bench tui --no-run
fi

# ---------------------------------------------------------------- journals
mkdir -p "$DATA" "$RES"
gen() { # FILE LINES [--one-intent]
  [ -s "$1" ] && return 0
  echo "generating $1 ($2 lines) ..." >&2
  ./target/release/examples/chained_journal "$1.tmp" "${@:2}"
  mv "$1.tmp" "$1"
}
gen "$J1" 1000000
needs_any g10 i10 e10 v10 tt10 && gen "$J10" 10000000
needs_any g200 e200 && gen "$J200" 1000000 --one-intent

# The group investigated and exported: the intent of the first execution
# (act_0000000000); the list also gives the group count beside DuckDB's. Its id hashes fingerprint, actor and scope, so it is the
# same group in all three journals, and in the 200k journal it is the only one.
GROUP=""
if needs_any i1 i10 e1 e10 e200 g1 duck1; then
  echo "reading groups of $J1 (not timed) ..." >&2
  "$RETRACE" groups "$J1" --json > "$RES/groups-1m.json" 2> /dev/null
  GROUP=$(python3 -c '
import json, sys
for g in json.load(open(sys.argv[1])):
    if "act_0000000000" in g["execution_ids"]:
        print(g["group_id"]); break
' "$RES/groups-1m.json")
  [ -n "$GROUP" ] || { echo "compare.sh: no group holds act_0000000000 in $J1" >&2; exit 1; }
fi

# DuckDB: the same grouping as retrace groups. In a native journal the
# intent is the `action` object of each `accepted` line (actor and
# intent_scope are inside it); retrace's fingerprint is sha256 of its
# canonical JSON, which for these generated journals (keys sorted, no
# spaces) is the text as written: DuckDB's sha256 of it gives the same
# fingerprints. The query time alone (without starting Python) goes to
# stderr, for the footnote.
DUCK_PY=$(cat << 'EOF'
import sys, time
import duckdb
con = duckdb.connect()
con.execute("SET threads = 2")
t = time.perf_counter()
rows = con.execute("""
    SELECT sha256(action::VARCHAR) AS fingerprint,
           action->>'actor' AS actor,
           action->>'intent_scope' AS intent_scope,
           count(*) AS calls
    FROM read_json(?, format = 'newline_delimited',
                   columns = {'event': 'VARCHAR', 'action': 'JSON'})
    WHERE event = 'accepted'
    GROUP BY fingerprint, actor, intent_scope
""", [sys.argv[1]]).fetchall()
t = time.perf_counter() - t
repeated = sum(1 for r in rows if r[3] > 1)
print(f"groups={len(rows)} repeated={repeated} query_s={t:.3f}", file=sys.stderr)
EOF
)
# shellcheck disable=SC2089,SC2090 # a jq program, passed as one word
JQ_GROUP='select(.event == "accepted") | [(.action | tojson), .action.actor, .action.intent_scope] | @tsv'

# job_cmd JOB: what a job runs, for progress lines and notes.
job_cmd() {
  case "$1" in
    g1) echo "retrace groups --json (1M)" ;;
    g10) echo "retrace groups --json (10M)" ;;
    g200) echo "retrace groups --json (one intent, 200k calls)" ;;
    i1) echo "retrace investigate --group $GROUP (1M)" ;;
    i10) echo "retrace investigate --group $GROUP (10M)" ;;
    e1) echo "retrace export --group $GROUP --format markdown (1M)" ;;
    e10) echo "retrace export --group $GROUP --format markdown (10M)" ;;
    e200) echo "retrace export --group $GROUP --format markdown (one intent, 200k calls)" ;;
    v1) echo "retrace verify (1M)" ;;
    v10) echo "retrace verify (10M)" ;;
    ssl1) echo "openssl dgst -sha256 (1M)" ;;
    duck1) echo "DuckDB GROUP BY (1M)" ;;
    jq1) echo "jq | sort | uniq -c (1M)" ;;
    tui) echo "cargo bench --bench tui (1M)" ;;
    tt1) echo "retrace TUI in tmux until its verdicts show (1M)" ;;
    tt10) echo "retrace TUI in tmux until its verdicts show (10M)" ;;
  esac
}
available() {
  case "$1" in
    jq1) command -v jq > /dev/null 2>&1 ;;
    ssl1) command -v openssl > /dev/null 2>&1 ;;
    tt1 | tt10) command -v tmux > /dev/null 2>&1 && [ -n "$GNU_TIME" ] ;;
    *) return 0 ;;
  esac
}
run_job() { # JOB: runs it once (in a bash -c of its own)
  case "$1" in
    g1) exec "$RETRACE" groups "$J1" --json ;;
    g10) exec "$RETRACE" groups "$J10" --json ;;
    g200) exec "$RETRACE" groups "$J200" --json ;;
    i1) exec "$RETRACE" investigate "$J1" --group "$GROUP" ;;
    i10) exec "$RETRACE" investigate "$J10" --group "$GROUP" ;;
    e1) exec "$RETRACE" export "$J1" --group "$GROUP" --format markdown ;;
    e10) exec "$RETRACE" export "$J10" --group "$GROUP" --format markdown ;;
    e200) exec "$RETRACE" export "$J200" --group "$GROUP" --format markdown ;;
    v1) exec "$RETRACE" verify "$J1" ;;
    v10) exec "$RETRACE" verify "$J10" ;;
    ssl1) exec openssl dgst -sha256 "$J1" ;;
    duck1) exec "$PY" -c "$DUCK_PY" "$J1" ;;
    jq1) jq -r "$JQ_GROUP" "$J1" | LC_ALL=C sort | uniq -c ;;
    tui) exec cargo bench --locked --quiet --bench tui -- "$J1" ;;
    tt1) tui_in_tmux "$1" "$J1" ;;
    tt10) tui_in_tmux "$1" "$J10" ;;
  esac
}
# tui_in_tmux JOB JOURNAL: the real binary's TUI on a 160x48 terminal in a
# tmux session of its own, from start until the overview shows its worst
# groups (the verdicts on screen; polled every 0.1 s), then q. Appends the
# milliseconds to $RES/JOB.verdicts and the binary's own peak memory (GNU
# time, inside the session) to $RES/JOB.tui.rss.
tui_in_tmux() {
  local job=$1 journal=$2 s start
  s="retrace-bench-$$-$job"
  start=$(date +%s%N)
  tmux new-session -d -s "$s" -x 160 -y 48 -c "$PWD" \
    "exec $GNU_TIME -a -f %M -o '$RES/$job.tui.rss' '$RETRACE' '$journal'"
  until tmux capture-pane -p -t "$s" 2> /dev/null | grep -q 'Worst groups ('; do
    tmux has-session -t "$s" 2> /dev/null || return 1
    sleep 0.1
  done
  echo $(( ($(date +%s%N) - start) / 1000000 )) >> "$RES/$job.verdicts"
  tmux send-keys -t "$s" q
  while tmux has-session -t "$s" 2> /dev/null; do sleep 0.1; done
}
export -f run_job tui_in_tmux
# shellcheck disable=SC2090
export RETRACE J1 J10 J200 GROUP PY DUCK_PY JQ_GROUP RES GNU_TIME

# measure JOB: one timed run, appending "wall_s rss_kib status" to $RES/JOB.
# Standard output goes to /dev/null but for the TUI bench's (its figures);
# standard error is kept in $RES/JOB.err.ROUND.
# shellcheck disable=SC2016 # run_job's argument expands in the bash -c
measure() {
  local job=$1 out=/dev/null err=$RES/$1.err.$round start end rc rss status
  case "$job" in tui) out=$RES/tui.out.$round ;; esac
  start=$(date +%s%N)
  if [ -n "$GNU_TIME" ]; then
    if "$GNU_TIME" -f %M -o "$RES/$job.rss" \
        timeout --kill-after=10 "$TIMEOUT" bash -c 'run_job "$1"' _ "$job" > "$out" 2> "$err"; then
      rc=0
    else
      rc=$?
    fi
  else
    if timeout --kill-after=10 "$TIMEOUT" bash -c 'run_job "$1"' _ "$job" > "$out" 2> "$err"; then
      rc=0
    else
      rc=$?
    fi
  fi
  end=$(date +%s%N)
  rss=NA
  [ -n "$GNU_TIME" ] && rss=$(tail -n 1 "$RES/$job.rss")
  case "$rc" in
    0) status=ok ;;
    124) status=timeout ;;
    137) status=killed ;; # by timeout after its grace period, or out of memory
    *) status=exit$rc ;;
  esac
  echo "$(( (end - start) / 1000000 )) $rss $status" | awk '{printf "%.3f %s %s\n", $1 / 1000, $2, $3}' >> "$RES/$job"
  [ "$status" = ok ] || note "$(job_cmd "$job"): $status after $(tail -n 1 "$RES/$job" | cut -d' ' -f1) s"
}

# ---------------------------------------------------------------- header
commit=$(git rev-parse --short HEAD 2> /dev/null || echo unknown)
dirty=$(git status --porcelain --untracked-files=no 2> /dev/null | head -n 1)
cpu=$(awk -F': ' '/^model name/ {print $2; exit}' /proc/cpuinfo 2> /dev/null || true)
echo
echo "retrace $commit${dirty:+ (uncommitted changes)} against baselines, $(date -u '+%Y-%m-%d %H:%M UTC')"
echo "machine: $(nproc) cores${cpu:+ ($cpu)}, $(awk '/^MemTotal/ {printf "%.0f GiB", $2 / 1048576}' /proc/meminfo) memory, $(uname -sm)"
echo "load average before the runs: $(cut -d' ' -f1-3 /proc/loadavg) (other work on the machine skews the figures)"
echo "runs: $RUNS per command, alternating; timeout ${TIMEOUT} s; DuckDB $DUCKDB_VERSION (2 threads)"
for j in "$J1" "$J10" "$J200"; do
  [ -s "$j" ] || continue
  case "$j" in
    "$J10") needs_any g10 i10 e10 v10 || continue ;;
    "$J200") needs_any g200 e200 || continue ;;
  esac
  printf 'journal: %s, %d MB\n' "$j" "$(( $(stat -c %s "$j") / 1000000 ))"
done
[ -n "$GROUP" ] && echo "group investigated and exported: $GROUP"
echo

# ---------------------------------------------------------------- runs
for j in "${jobs[@]}"; do rm -f "$RES/$j" "$RES/$j".err.* "$RES/$j".out.* "$RES/$j".verdicts "$RES/$j".tui.rss; done
# Start from the page cache, for every command alike.
for j in "$J1" "$J10" "$J200"; do
  if [ -s "$j" ]; then cat "$j" > /dev/null; fi
done
t_start=$(date +%s)
for round in $(seq "$RUNS"); do
  for j in "${jobs[@]}"; do
    available "$j" || continue
    # A command that timed out or was killed is not run again.
    if [ -s "$RES/$j" ] && grep -q -E ' (timeout|killed)$' "$RES/$j"; then continue; fi
    echo "round $round/$RUNS: $(job_cmd "$j")" >&2
    measure "$j"
  done
done
t_runs=$(( $(date +%s) - t_start ))

# ---------------------------------------------------------------- figures
median() { sort -g | awk '{a[NR] = $1} END {if (NR == 0) print "NA"; else printf "%.9f\n", (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2)}'; }
# job_stat JOB COLUMN: the median wall time (1) over the runs, or
# "timeout", "killed" or "error" when one did not end well; or the median
# peak memory (2) over every run (the memory a stopped run had reached).
job_stat() {
  local runs=$RES/$1
  [ -s "$runs" ] || { echo NA; return; }
  if [ "$2" = 1 ]; then
    if grep -q ' timeout$' "$runs"; then echo timeout; return; fi
    if grep -q ' killed$' "$runs"; then echo killed; return; fi
    if grep -qv ' ok$' "$runs"; then echo error; return; fi
  fi
  awk -v c="$2" '$c != "NA" {print $c}' "$runs" | median
}
# tui_fig KEY: median over the runs of one figure of the TUI bench, in s.
tui_fig() {
  local pat
  case "$1" in
    first) pat='^first frame \(loading' ;;
    data) pat='^first frame with data' ;;
    p99) pat='^p99 key' ;;
    worst) pat='^worst key' ;;
    empty) pat='^baseline:' ;;
  esac
  local files=("$RES"/tui.out.*)
  [ -e "${files[0]}" ] || { echo NA; return; }
  if [ "$1" = empty ]; then
    sed -n -E "/$pat/ s/.*frame ([0-9.]+) ms.*/\1/p" "${files[@]}"
  else
    sed -n -E "/$pat/ s/^[^:]*: *([0-9.]+) ms.*/\1/p" "${files[@]}"
  fi | awk '{print $1 / 1000}' | median
}
# value SPEC COLUMN: a job's median wall (1) or peak memory (2), or a
# figure of the TUI bench (tui:KEY; memory: the bench's).
value() {
  case "$1" in
    tui:empty) [ "$2" = 1 ] && tui_fig empty || echo NA ;;
    tui:*) if [ "$2" = 1 ]; then tui_fig "${1#tui:}"; else job_stat tui 2; fi ;;
    tt1 | tt10)
      if ! available "$1" || [ ! -s "$RES/$1.verdicts" ]; then echo NA
      elif [ "$2" = 1 ]; then awk '{print $1 / 1000}' "$RES/$1.verdicts" | median
      else median < "$RES/$1.tui.rss"
      fi ;;
    *) available "$1" && job_stat "$1" "$2" || echo NA ;;
  esac
}
isnum() { [[ $1 =~ ^[0-9.]+$ ]]; }
fmt_t() {
  isnum "$1" || { echo "$1"; return; }
  awk -v s="$1" 'BEGIN { if (s < 0.01) printf "%.2f ms", s * 1000; else if (s < 1) printf "%.1f ms", s * 1000; else printf "%.2f s", s }'
}
fmt_m() {
  isnum "$1" || { echo "$1"; return; }
  awk -v k="$1" 'BEGIN { printf "%.0f MiB", k / 1024 }'
}
fmt_target() {
  local out="" t
  for t in $1; do
    case "$t" in
      ratio:*) out+="<= ${t#ratio:}x" ;;
      abs:*) out+="<= $(fmt_t "${t#abs:}")" ;;
      rss:base) out+=", RSS <= base" ;;
      rss:*) out+=", RSS <= $(awk -v k="${t#rss:}" 'BEGIN { printf "%g GiB", k / 1048576 }')" ;;
      none) out+="reference" ;;
    esac
  done
  echo "${out#, }"
}
# verdict TARGETS RW BW RM BM: PASS, FAIL or "-".
verdict() {
  local targets=$1 rw=$2 bw=$3 rm=$4 bm=$5 ok=1 t
  [ "$targets" = none ] && { echo "-"; return; }
  for t in $targets; do
    case "$t" in
      ratio:*)
        if ! isnum "$rw" || ! isnum "$bw"; then
          case "$rw" in timeout|killed|error) echo FAIL; return ;; esac
          echo "n/a"; return
        fi
        awk -v a="$rw" -v b="$bw" -v r="${t#ratio:}" 'BEGIN { exit !(a <= r * b) }' || ok=0 ;;
      abs:*)
        isnum "$rw" || { echo FAIL; return; }
        awk -v a="$rw" -v r="${t#abs:}" 'BEGIN { exit !(a <= r) }' || ok=0 ;;
      rss:base)
        if isnum "$rm" && isnum "$bm"; then
          awk -v a="$rm" -v b="$bm" 'BEGIN { exit !(a <= b) }' || ok=0
        fi ;;
      rss:*)
        if isnum "$rm"; then
          awk -v a="$rm" -v b="${t#rss:}" 'BEGIN { exit !(a <= b) }' || ok=0
        fi ;;
    esac
  done
  [ "$ok" = 1 ] && echo PASS || echo FAIL
}

table=$RES/table.txt
{
  printf '%-22s %-52s %10s %10s %8s %-20s %9s %9s %s\n' \
    row work retrace baseline ratio target "ret. RSS" "base RSS" result
  for r in "${selected[@]}"; do
    name=$(field "$r" 0); work=$(field "$r" 1); rj=$(field "$r" 2); bj=$(field "$r" 3); tg=$(field "$r" 4)
    rw=$(value "$rj" 1); bw=$(value "$bj" 1); rm=$(value "$rj" 2); bm=$(value "$bj" 2)
    [[ $bj == tui:empty ]] && bm=NA
    ratio=NA
    if isnum "$rw" && isnum "$bw"; then
      ratio=$(awk -v a="$rw" -v b="$bw" 'BEGIN { if (b > 0) printf (a / b < 10 ? "%.2fx" : "%.0fx"), a / b; else print "NA" }')
    fi
    if [ "$bj" = jq1 ] && ! available jq1; then bw="no jq"; fi
    printf '%-22s %-52s %10s %10s %8s %-20s %9s %9s %s\n' "$name" "$work" \
      "$(fmt_t "$rw")" "$(fmt_t "$bw")" "$ratio" "$(fmt_target "$tg")" \
      "$(fmt_m "$rm")" "$(fmt_m "$bm")" "$(verdict "$tg" "$rw" "$bw" "$rm" "$bm")"
  done
} > "$table"
cat "$table"
echo
echo "medians of $RUNS run(s); wall time of the whole process, peak memory (max RSS) from GNU time"
echo "(for a pipeline, the largest process). Timed runs took $t_runs s; load average after: $(cut -d' ' -f1-3 /proc/loadavg)."
if needs duck1 && compgen -G "$RES/duck1.err.*" > /dev/null; then
  q=$(sed -n 's/.*query_s=\([0-9.]*\).*/\1/p' "$RES"/duck1.err.* | median)
  counts=$(sed -n 's/^\(groups=[0-9]* repeated=[0-9]*\).*/\1/p' "$RES"/duck1.err.1 | tr '=' ' ')
  echo "DuckDB: the query alone (without starting Python and importing duckdb) $(fmt_t "$q") (median);"
  echo "  it finds $(echo "$counts" | awk '{print $2}') intents, $(echo "$counts" | awk '{print $4}') of them called more than once;" \
    "retrace groups lists $(python3 -c 'import json, sys; print(len(json.load(open(sys.argv[1]))))' "$RES/groups-1m.json") groups."
fi
if needs v1 && needs duck1; then
  # groups, the TUI and export check the chain as they read (docs/design.md
  # §6): verify's work is a floor under theirs, which the ratio shows.
  vw=$(value v1 1); dw=$(value duck1 1)
  if isnum "$vw" && isnum "$dw"; then
    echo "Floor: reading 1M events checks their chain; that check alone (retrace verify) took" \
      "$(awk -v a="$vw" -v b="$dw" 'BEGIN { printf "%.2fx", a / b }') DuckDB's GROUP BY time."
  fi
fi
if needs tui && compgen -G "$RES/tui.out.*" > /dev/null; then
  echo "TUI bench (cargo bench --bench tui on $J1): worst key to frame $(fmt_t "$(tui_fig worst)") (median over runs);"
  echo "  its full output is in $RES/tui.out.*"
fi
echo "table saved in $table"
