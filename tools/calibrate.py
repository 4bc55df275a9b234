#!/usr/bin/env python3
"""Fit a hardware preset's calibration constants on published, measured training steps.

    tools/calibrate.py --instance dgx-a100-80gb --param matmul_efficiency \
        configs/validation/megatron2021-*.json

For every trial value the script copies configs/ to a scratch folder, writes the trial constants
into the preset there, and runs `trnsim run --json` on each experiment file as it is (the same rule
for unpublished fields as `trnsim validate`), with TRNSIM_CONFIG_DIR pointing at the scratch copy.
It minimises the mean absolute step-time error over the files (ties: the smaller worst error) by
golden-section search on each parameter in turn, and prints the fitted values and the residual of
every file. Nothing depends on a file's id or name: every file weighs the same.

The fitted values are not written back: copy them into configs/hardware/NAME.json with their
provenance (this command line, the mean and worst error it printed).
Needs python3 (standard library only) and a built trnsim (default build/release/trnsim).
"""
import argparse
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

# Physical bounds of each constant the script may fit: (low, high).
BOUNDS = {
    "matmul_efficiency": (0.3, 1.0),
    "vector_efficiency": (0.2, 1.0),
    "hbm_efficiency": (0.3, 1.0),
    "task_overhead_us": (0.0, 50.0),
    "collective_startup_us": (0.0, 200.0),
    "collective_step_us": (0.0, 50.0),
    "comm_compute_slowdown": (1.0, 2.0),
}


def run_file(trnsim, config_dir, path):
    env = dict(os.environ, TRNSIM_CONFIG_DIR=config_dir)
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        proc = subprocess.run([trnsim, "run", path, "--json", out.name], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            sys.exit(f"calibrate: trnsim run {path} failed (exit {proc.returncode}): {proc.stderr.strip()}")
        return json.load(open(out.name))["results"]["step_time_s"]


def measured(path):
    with open(path) as f:
        doc = json.load(f)
    try:
        return float(doc["measured"]["step_time_s"])
    except (KeyError, TypeError, ValueError):
        sys.exit(f"calibrate: {path}: /measured/step_time_s: expected a number")


class Fit:
    def __init__(self, args):
        self.args = args
        self.scratch = tempfile.mkdtemp(prefix="trnsim-calibrate-")
        shutil.copytree(args.configs, os.path.join(self.scratch, "configs"))
        self.config_dir = os.path.join(self.scratch, "configs")
        self.preset = os.path.join(self.config_dir, "hardware", args.instance + ".json")
        with open(self.preset) as f:
            self.base = json.load(f)
        self.values = {p: self.base["calibration"][p] for p in args.param}
        self.meas = {p: measured(p) for p in args.files}
        self.cache = {}

    def errors(self, values):
        key = tuple(round(values[p], 6) for p in self.args.param)
        if key in self.cache:
            return self.cache[key]
        doc = json.loads(json.dumps(self.base))
        for p, v in values.items():
            doc["calibration"][p] = round(v, 6)
        with open(self.preset, "w") as f:
            json.dump(doc, f, indent=2)
        errs = {}
        for path in self.args.files:
            pred = run_file(self.args.trnsim, self.config_dir, path)
            errs[path] = (pred, 100.0 * (pred - self.meas[path]) / self.meas[path])
        self.cache[key] = errs
        return errs

    def score(self, values):
        e = [abs(x[1]) for x in self.errors(values).values()]
        return (sum(e) / len(e), max(e))

    def golden(self, param):
        lo, hi = BOUNDS[param]
        g = (math.sqrt(5) - 1) / 2

        def f(x):
            v = dict(self.values)
            v[param] = x
            return self.score(v)

        a, b = lo, hi
        c, d = b - g * (b - a), a + g * (b - a)
        fc, fd = f(c), f(d)
        while b - a > self.args.tolerance * (hi - lo):
            if fc < fd:
                b, d, fd = d, c, fc
                c = b - g * (b - a)
                fc = f(c)
            else:
                a, c, fc = c, d, fd
                d = a + g * (b - a)
                fd = f(d)
        self.values[param] = c if fc < fd else d

    def run(self):
        for _ in range(self.args.rounds):
            for p in self.args.param:
                self.golden(p)
        return self.values

    def close(self):
        shutil.rmtree(self.scratch, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="experiment files with a measured block")
    ap.add_argument("--instance", required=True, help="hardware preset to fit (configs/hardware/NAME.json)")
    ap.add_argument("--param", action="append", required=True, choices=sorted(BOUNDS),
                    help="calibration constant to fit (repeat for several)")
    ap.add_argument("--trnsim", default="build/release/trnsim")
    ap.add_argument("--configs", default="configs", help="the configs/ folder to copy")
    ap.add_argument("--rounds", type=int, default=1, help="passes over the parameters")
    ap.add_argument("--tolerance", type=float, default=0.01, help="search interval, fraction of the bounds")
    args = ap.parse_args()
    fit = Fit(args)
    try:
        before = fit.score(fit.values)
        values = fit.run()
        errs = fit.errors(values)
        mean, worst = fit.score(values)
    finally:
        fit.close()
    print(f"instance {args.instance}: {len(args.files)} files")
    print(f"before: mean |error| {before[0]:.2f} %, worst {before[1]:.2f} %")
    for p, v in values.items():
        print(f"fitted {p} = {v:.4f}")
    print(f"after:  mean |error| {mean:.2f} %, worst {worst:.2f} %")
    for path, (pred, err) in errs.items():
        print(f"  {os.path.basename(path):40s} measured {fit.meas[path]:10.4f} s  predicted {pred:10.4f} s  {err:+6.2f} %")


if __name__ == "__main__":
    main()
