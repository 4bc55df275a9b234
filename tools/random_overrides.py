#!/usr/bin/env python3
"""Random `--set` overrides on an experiment, as a new user (or a script) might try them.

Picks numeric (and some non-numeric) leaves of the resolved experiment (`trnsim run FILE
--dry-run`), gives one to three of them values from a list of hostile numbers (0, negatives,
1e30, 1e308, 1e-300, huge integers, fractions, strings, null, arrays), runs `trnsim run FILE
--set ...` and checks the exit code: 0 (it ran), 1 (a finding asked for) or 2 (bad input, with
one `error:` line naming the --set). Exit 3 (internal error), a signal, a hang past --timeout or
an exit-2 message without the override's JSON path is a defect; the script lists each and exits 1.

Deterministic for a given --seed. Usage:
  tools/random_overrides.py build/release/trnsim configs/examples/tiny-trn1.json [-n 400] [--seed 14]
"""
import argparse
import json
import random
import subprocess
import sys

HOSTILE = [0, -1, -1e-9, 1e-300, 1e-3, 0.5, 1.5, 7, 1e6, 1e9, 1e30, 1e308, -1e308, 2**31, 2**53, 2**63,
           10**30, "\"x\"", "null", "true", "[]", "{}", "1e", "NaN", "Infinity", "-0"]


def leaves(node, path=()):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("sources", "source", "notes", "description", "derived"):
                continue
            yield from leaves(v, path + (k,))
    elif isinstance(node, list):
        return  # arrays (recipes, notes) are edited as a whole, not element by element
    else:
        yield path, node


def value_text(rng, current):
    if isinstance(current, (int, float)) and not isinstance(current, bool) and rng.random() < 0.3:
        # Near the current value, or scaled by a large factor.
        factor = rng.choice([1e-12, 1e-6, 1e-3, 0.1, 10, 1e3, 1e6, 1e12])
        return repr(float(current) * factor)
    v = rng.choice(HOSTILE)
    return v if isinstance(v, str) else repr(v)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("trnsim")
    ap.add_argument("experiment")
    ap.add_argument("-n", type=int, default=400, help="runs (default 400)")
    ap.add_argument("--seed", type=int, default=14)
    ap.add_argument("--timeout", type=float, default=60, help="seconds per run before it counts as a hang")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every run")
    args = ap.parse_args()

    resolved = json.loads(subprocess.run([args.trnsim, "run", args.experiment, "--dry-run"], check=True,
                                         capture_output=True, text=True).stdout)
    paths = [(p, v) for p, v in leaves(resolved)]
    numeric = [(p, v) for p, v in paths if isinstance(v, (int, float)) and not isinstance(v, bool)]
    rng = random.Random(args.seed)
    counts, defects = {}, []
    for i in range(args.n):
        picks = [rng.choice(numeric if rng.random() < 0.85 else paths) for _ in range(rng.choice([1, 1, 2, 3]))]
        sets = [".".join(p) + "=" + value_text(rng, v) for p, v in picks]
        cmd = [args.trnsim, "--quiet", "run", args.experiment]
        for s in sets:
            cmd += ["--set", s]
        try:
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout)
            code, err = r.returncode, r.stderr.strip()
        except subprocess.TimeoutExpired:
            code, err = "hang", ""
        counts[code] = counts.get(code, 0) + 1
        lines = err.splitlines()
        bad = code not in (0, 1, 2)
        if code == 2:
            # One line, naming the override and a JSON path (or the estimate of a guard).
            bad = len(lines) != 1 or not lines[0].startswith("error: ") or "--set" not in lines[0]
        if bad:
            defects.append((code, sets, err[:400]))
        if args.verbose:
            print(f"{i:4d} exit {code}: {' '.join(sets)}\n     {err[:200]}")
    print(f"{args.n} runs of {args.experiment} with random --set: " +
          ", ".join(f"exit {k}: {counts[k]}" for k in sorted(counts, key=str)))
    for code, sets, err in defects:
        print(f"DEFECT exit {code}: --set {' --set '.join(sets)}\n  {err}")
    return 1 if defects else 0


if __name__ == "__main__":
    sys.exit(main())
