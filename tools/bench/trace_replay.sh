#!/usr/bin/env bash
# Reading and replaying a generated trace of one million nodes (issue 13's target: under 5 s and
# under 2 GiB): 64 ranks of trn1.32xlarge x 2 instances, each rank a chain of 15,625 nodes, every
# 25th an all-reduce of 4 MiB over all 64 ranks, the others compute nodes sharing 24 works (FLOP
# counts and HBM bytes). Prints the wall time and the peak memory (maximum resident set) of
# `trnsim run` on it (and its CPU time: the machine may be shared), median of --reps runs. A benchmark, not a test: nothing is asserted.
#   tools/bench/trace_replay.sh [TRNSIM] [--reps N] [--nodes N]
set -euo pipefail
cd "$(dirname "$0")/../.."
trnsim=build/release/trnsim
reps=3
nodes=1000000
while (($#)); do
  case "$1" in
    --reps) reps=$2; shift 2 ;;
    --nodes) nodes=$2; shift 2 ;;
    -*) echo "usage: tools/bench/trace_replay.sh [TRNSIM] [--reps N] [--nodes N]" >&2; exit 2 ;;
    *) trnsim=$1; shift ;;
  esac
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[[ -n "${KEEP:-}" ]] && trap - EXIT && echo "KEEP: files kept in $tmp" >&2  # for profiling
python3 - "$tmp/trace.json" "$nodes" <<'PY'
import sys
path, total = sys.argv[1], int(sys.argv[2])
ranks = 64
per_rank = total // ranks
with open(path, "w") as f:
    f.write('{"format":"trnsim-trace","version":1,"total_ranks":%d,\n' % ranks)
    f.write('"groups":[{"size":%d,"ranks":[%s]}],\n' % (ranks, ",".join(map(str, range(ranks)))))
    works = ['{"name":"w%d","kernels":[{"op":"matmul","flops":%d,"hbm_bytes":%d}]}' % (w, (w + 1) * 10**9, (w + 1) * 10**7)
             for w in range(24)]
    f.write('"works":[%s],\n"ranks":[' % ",".join(works))
    for r in range(ranks):
        f.write(',\n' if r else '\n')
        f.write('{"rank":%d,"nodes":[' % r)
        out = []
        for i in range(per_rank):
            dep = '' if i == 0 else ',"deps":[%d]' % (i - 1)
            if i % 25 == 24:
                out.append('{"id":%d,"kind":"collective","op":"all-reduce","bytes":4194304,"group":0%s}' % (i, dep))
            else:
                out.append('{"id":%d,"kind":"compute","work":%d%s}' % (i, i % 24, dep))
        f.write(",\n".join(out) + "]}")
    f.write("]}\n")
PY
cat >"$tmp/experiment.json" <<JSON
{"name": "generated trace", "cluster": {"instance": "trn1.32xlarge", "count": 2}, "workload": {"trace": "$tmp/trace.json"}}
JSON
echo "trace: $(( nodes / 64 * 64 )) nodes on 64 ranks, $(du -m "$tmp/trace.json" | cut -f1) MB"
for ((i = 0; i < reps; ++i)); do
  /usr/bin/time -f "%e %M %U %S" -o "$tmp/time.$i" "$trnsim" -q run "$tmp/experiment.json" > "$tmp/out.txt"
done
grep "^step time" "$tmp/out.txt"
sort -n "$tmp"/time.* | awk -v n="$reps" '{w[NR]=$1; m[NR]=$2; c[NR]=$3+$4} END {
  printf "wall %.2f s, CPU %.2f s (median of %d by wall), max resident %.0f MiB\n", w[int((n+1)/2)], c[int((n+1)/2)], n, m[int((n+1)/2)]/1024 }'
