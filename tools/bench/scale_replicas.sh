#!/usr/bin/env bash
# Cost of data-parallel replicas: llama3.1-405b on trn2 UltraServers (tp 16, pp 16, 128
# micro-batches of 1 per replica, as in configs/examples/llama3.1-405b-trn2u.json) at 1,024,
# 4,096, 16,384 and 65,536 chips, analytic network by default. Symmetric simulation runs 16 ranks
# whatever the size; this prints, per size, the events, wall time and peak RSS of `trnsim run`
# and its user and system CPU time (medians of --reps runs, the sizes interleaved; times from
# bash's time, to the millisecond, the peak RSS from /usr/bin/time), and the wall-time ratio of
# the last size to the first.
# A benchmark, not a test: nothing is asserted.
#   tools/bench/scale_replicas.sh [TRNSIM] [--reps N] [--network analytic|flow] [--chips LIST] [-- EXTRA RUN ARGS]
set -euo pipefail
caller=$PWD
cd "$(dirname "$0")/../.."
trnsim=build/release/trnsim
reps=3
network=analytic
chips_list="1024 4096 16384 65536"
extra=()
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --network) network=$2; shift 2 ;;
    --chips) chips_list=${2//,/ }; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    -*) echo "usage: tools/bench/scale_replicas.sh [TRNSIM] [--reps N] [--network M] [--chips LIST] [-- ARGS]" >&2; exit 2 ;;
    *) trnsim=$1; shift ;;
  esac
done
if [[ "$trnsim" != /* ]]; then trnsim=$caller/$trnsim; fi
[[ -x "$trnsim" ]] || trnsim=$(realpath "$trnsim")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

median() { sort -g | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }

TIMEFORMAT='%3R %3U %3S'
printf '%-7s %-6s %-7s %-9s %-8s %-8s %-8s %-9s %s\n' chips dp ranks events wall_s user_s sys_s peak_MiB step_time
# The sizes interleaved, round after round: on a shared virtual machine the first run after other
# work can spend half a second more zeroing fresh pages (system time), and interleaving spreads
# such runs over the sizes instead of charging them to one.
for ((r = 0; r < reps; ++r)); do
  for chips in $chips_list; do
    # 16 chips per trn2u.48xlarge; dp grows with the cluster, 128 micro-batches of 1 per replica.
    count=$((chips / 16))
    dp=$((chips * 4 / 256))
    batch=$((dp * 128))
    # Bash's time to the millisecond (its user and system time include /usr/bin/time's own, about
    # a millisecond), /usr/bin/time for the peak RSS.
    if ! { time /usr/bin/time -f '%M' -o "$tmp/rss.txt" "$trnsim" run configs/examples/llama3.1-405b-trn2u.json \
      --network "$network" --set cluster.count=$count --set parallelism.dp=$dp --set training.global_batch=$batch \
      "${extra[@]}" > "$tmp/out.$chips" 2> "$tmp/err.txt"; } 2> "$tmp/time.txt"; then
      echo "tools/bench/scale_replicas.sh: the run at $chips chips failed:" >&2
      grep -v '^Command exited' "$tmp/err.txt" >&2 || true
      exit 1
    fi
    read -r wall user sys < <(tail -1 "$tmp/time.txt")
    read -r rss < <(tail -1 "$tmp/rss.txt")
    echo "$wall" >> "$tmp/wall.$chips"; echo "$user" >> "$tmp/user.$chips"; echo "$sys" >> "$tmp/sys.$chips"
    echo $((rss / 1024)) >> "$tmp/rss.$chips"
  done
done
for chips in $chips_list; do
  events=$(grep -o '[0-9]* events' "$tmp/out.$chips" | head -1 | cut -d' ' -f1)
  step=$(grep -m1 -io 'step time[^,;]*' "$tmp/out.$chips" || true)
  printf '%-7s %-6s %-7s %-9s %-8s %-8s %-8s %-9s %s\n' "$chips" $((chips * 4 / 256)) $((chips * 4)) "$events" \
    "$(median < "$tmp/wall.$chips")" "$(median < "$tmp/user.$chips")" "$(median < "$tmp/sys.$chips")" \
    "$(median < "$tmp/rss.$chips")" "$step"
done
set -- $chips_list
first=$1
last=${*: -1}
if [[ "$first" != "$last" ]]; then
  awk -v a="$(median < "$tmp/wall.$first")" -v b="$(median < "$tmp/wall.$last")" -v f="$first" -v l="$last" \
    'BEGIN { printf "wall time, %s / %s chips: %.2fx (medians)\n", l, f, b / a }'
fi
