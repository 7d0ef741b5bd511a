#!/usr/bin/env bash
# Two builds of retrace, the same answers: runs both on every journal the
# repository holds (and on the real journals beside it, when present) and
# compares what each command prints, byte for byte, with its exit code.
#
#   benches/same-answers.sh OLD_BINARY NEW_BINARY [JOURNAL…]
#
# Commands: `groups --all --json`, `groups --all`, `verify --json`; and for
# up to four groups of each journal, `investigate --json`, `investigate`,
# and `export` as Markdown, JSON and CSV. With JOURNAL arguments, only
# those (a file or a folder each). Prints one line per difference and a
# count; exits 1 when anything differs. For a change that must not move an
# answer (a faster reader, a smaller model): build the old commit, then
#
#   git worktree add /tmp/old HEAD~1 && cargo build --release --manifest-path /tmp/old/Cargo.toml
#   benches/same-answers.sh /tmp/old/target/release/retrace target/release/retrace
set -uo pipefail
cd "$(dirname "$0")/.."
old=${1:?usage: same-answers.sh OLD_BINARY NEW_BINARY [JOURNAL…]}
new=${2:?usage: same-answers.sh OLD_BINARY NEW_BINARY [JOURNAL…]}
shift 2
old=$(realpath "$old")
new=$(realpath "$new")
inputs=("$@")
if [ ${#inputs[@]} -eq 0 ]; then
  inputs=(sample-journals/deploy-release-incident)
  for f in sample-journals/scenarios/*.jsonl tests/fixtures/*.jsonl tests/fixtures/*/*.jsonl \
    tests/fixtures/lab/*/traces.jsonl tests/fixtures/lab/*/audit-log.jsonl tests/fixtures/lab/contextforge/gateway.log; do
    [ -f "$f" ] && inputs+=("$f")
  done
  for d in ../shared/real-journals/*/; do
    [ -d "$d" ] && inputs+=("${d%/}")
  done
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
diffs=0
runs=0
# run NAME ARGS…: both builds, compared.
run() {
  local name=$1
  shift
  (cd "$tmp" && "$old" "$@" > o.out 2> o.err; echo $? > o.rc) < /dev/null
  (cd "$tmp" && "$new" "$@" > n.out 2> n.err; echo $? > n.rc) < /dev/null
  runs=$((runs + 1))
  for k in out err rc; do
    if ! cmp -s "$tmp/o.$k" "$tmp/n.$k"; then
      echo "DIFFERS ($k): $name: $*"
      diffs=$((diffs + 1))
      return
    fi
  done
}
contracts=(--contracts "$PWD/sample-journals/contracts.toml")
for j in "${inputs[@]}"; do
  j=$(realpath "$j")
  extra=()
  case "$j" in
    */sample-journals/*) extra=("${contracts[@]}" --key-file "$PWD/sample-journals/sample.key") ;;
  esac
  run groups-json groups --all --json "${extra[@]}" "$j"
  run groups groups --all "${extra[@]}" "$j"
  run verify verify --json "$j"
  ids=$("$new" groups --all --json "${extra[@]}" "$j" 2> /dev/null | grep -o '"group_id": "[^"]*"' | head -4 | cut -d'"' -f4)
  for g in $ids; do
    run investigate-json investigate --json --group "$g" "${extra[@]}" "$j"
    run investigate investigate --group "$g" "${extra[@]}" "$j"
    for f in markdown json csv; do
      run "export-$f" export --group "$g" --format "$f" "${extra[@]}" "$j"
    done
  done
done
echo "$runs comparisons, $diffs differ"
[ "$diffs" = 0 ]
