#!/usr/bin/env python3
"""Fit a hardware preset's calibration constants on measured training steps, jointly, and report
how well the fit predicts data it has not seen (leave-one-out).

    tools/calibrate.py --instance dgx-a100-80gb \
        --param matmul_efficiency --param task_overhead_us configs/validation/megatron2021-*.json

Every file must run on --instance. A trial runs `trnsim run FILE --set cluster.calibration.P=V
--json ...` for each file as it is (the same rule for unpublished fields as `trnsim validate`).
The objective is the mean absolute step-time error over the files (ties: the smaller worst error);
every file weighs the same and nothing depends on a file's name.

Search: compass search on a lattice (each constant in steps of --step of its bounds' width), from
the preset's current values; every (file, lattice point) is simulated once and cached, so the
leave-one-out fits (each file predicted by a fit made without it, started from the full fit) cost
little more than the full fit. With --drop, the leave-one-out error is also computed with each
constant held at its preset value instead of fitted: a constant earns its place only if fitting
it lowers the leave-one-out error.

Prints the fitted values, then per file: measured, in-sample prediction and error, leave-one-out
prediction and error; then the mean and worst of both. The values are not written back: copy them
into configs/hardware/NAME.json with their provenance (this command line and what it printed).
Needs python3 (standard library only) and a built trnsim (default build/release/trnsim).

    tools/calibrate.py --families configs/calibration/families.json \
        --fit A100-SXM4-80GB=matmul_efficiency \
        --fit Trainium=tensor_instruction_overhead_cycles,task_overhead_us \
        configs/validation/*.json configs/validation-heldout/*.json

With --families OUT.json (no --instance, --param): rows grouped by prediction family (chip x
software preset x collective runtime release); per family the in-sample, leave-one-out and
leave-one-family-out errors, and the cross-family error over all leave-one-family-out
predictions, written to OUT.json with this command line and the date (tools/calibration_families.py).
"""
import argparse
import concurrent.futures
import json
import os
import shlex
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
    "tensor_instruction_overhead_cycles": (0.0, 2000.0),
    "collective_launch_us": (0.0, 200.0),
    "collective_step_us": (0.0, 50.0),
    "collective_message_us": (0.0, 20.0),
    "collective_dma_share": (0.05, 1.0),
    "collective_stream_GBps": (1.0, 1000.0),
    "comm_compute_slowdown": (1.0, 2.0),
}


def fail(message):
    sys.exit(f"calibrate: {message}")


def read_json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        fail(f"{path}: {e}")


class Model:
    """Predictions of trnsim per (file, lattice point), cached."""

    def __init__(self, args):
        self.args = args
        self.params = args.param
        self.lo = [BOUNDS[p][0] for p in self.params]
        self.width = [BOUNDS[p][1] - BOUNDS[p][0] for p in self.params]
        self.cache = {}
        self.measured = {}
        for path in args.files:
            doc = read_json(path)
            try:
                self.measured[path] = float(doc["measured"]["step_time_s"])
            except (KeyError, TypeError, ValueError):
                fail(f"{path}: /measured/step_time_s: expected a number")
        self.pool = concurrent.futures.ThreadPoolExecutor(max_workers=args.jobs)

    def value(self, i, k):  # lattice index -> constant value
        return self.lo[i] + k * self.args.step * self.width[i]

    def index(self, i, v):
        return round((v - self.lo[i]) / (self.args.step * self.width[i]))

    def steps(self, i):
        return round(1 / self.args.step)

    def run(self, path, point):
        sets = []
        for i, p in enumerate(self.params):
            sets += ["--set", f"cluster.calibration.{p}={self.value(i, point[i]):.6g}"]
        with tempfile.NamedTemporaryFile(suffix=".json") as out:
            proc = subprocess.run([self.args.trnsim, "run", path, *sets, "--json", out.name],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
            if proc.returncode != 0:
                fail(f"trnsim run {path} failed (exit {proc.returncode}): {proc.stderr.strip()}")
            return read_json(out.name)["results"]["step_time_s"]

    def predict(self, paths, point):
        todo = [p for p in paths if (p, point) not in self.cache]
        for path, t in zip(todo, self.pool.map(lambda p: self.run(p, point), todo)):
            self.cache[(path, point)] = t
        return {p: self.cache[(p, point)] for p in paths}

    def error(self, path, t):
        return 100.0 * (t - self.measured[path]) / self.measured[path]

    def score(self, paths, point):
        e = [abs(self.error(p, t)) for p, t in self.predict(paths, point).items()]
        return (sum(e) / len(e), max(e))

    def fit(self, paths, start, free):
        """Compass search on the lattice over the constants whose index is in `free`."""
        point = tuple(start)
        best = self.score(paths, point)
        stride = [max(1, self.steps(i) // 8) for i in range(len(self.params))]
        while True:
            improved = False
            for i in free:
                for sign in (1, -1):
                    k = point[i] + sign * stride[i]
                    if k < 0 or k > self.steps(i):
                        continue
                    trial = point[:i] + (k,) + point[i + 1:]
                    s = self.score(paths, trial)
                    if s < best:
                        point, best, improved = trial, s, True
                        break
            if not improved:
                if all(stride[i] == 1 for i in free):
                    return point, best
                for i in free:
                    stride[i] = max(1, stride[i] // 2)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("files", nargs="+", help="experiment files with a measured block")
    ap.add_argument("--instance", help="hardware preset the files run on")
    ap.add_argument("--param", action="append", choices=sorted(BOUNDS),
                    help="calibration constant to fit (repeat for several: they are fitted jointly)")
    ap.add_argument("--trnsim", default="build/release/trnsim")
    ap.add_argument("--step", type=float, default=0.002, help="lattice step, fraction of each constant's bounds")
    ap.add_argument("--jobs", type=int, default=2, help="trnsim runs in parallel")
    ap.add_argument("--drop", action="store_true",
                    help="also the leave-one-out error with each constant held at its preset value")
    ap.add_argument("--families", metavar="OUT.json",
                    help="write error statistics per prediction family to this file (with --fit, not --instance)")
    ap.add_argument("--fit", action="append", metavar="CHIP=P[,Q]",
                    help="with --families: the constants fitted on a chip's rows (repeat per chip)")
    ap.add_argument("--calibrated", action="append", metavar="FILE",
                    help="with --families: fit only on these files (repeat; default every file of the chip); "
                         "the others are predicted, never fitted on")
    args = ap.parse_args()
    if args.families:
        if args.instance or args.param:
            fail("--families takes --fit CHIP=P[,Q], not --instance or --param")
        return families(args)
    if not args.instance or not args.param:
        fail("--instance and --param are required (or --families)")
    if len(args.files) < 2:
        fail("leave-one-out needs at least 2 files")
    preset = read_json(os.path.join("configs", "hardware", args.instance + ".json"))
    for path in args.files:
        inst = read_json(path).get("cluster", {}).get("instance")
        if inst != args.instance:
            fail(f"{path}: /cluster/instance: expected {args.instance}, found {inst}")

    # A private copy of the binary: a rebuild while the fit runs must not change (or break) it.
    scratch = tempfile.mkdtemp(prefix="trnsim-calibrate-")
    args.trnsim = shutil.copy2(args.trnsim, os.path.join(scratch, "trnsim"))
    m = Model(args)
    start = tuple(m.index(i, float(preset["calibration"][p])) for i, p in enumerate(args.param))
    everything = list(range(len(args.param)))
    files = list(args.files)
    point, (mean, worst) = m.fit(files, start, everything)
    fitted = m.predict(files, point)

    def loo(free):
        out = {}
        for held in files:
            rest = [f for f in files if f != held]
            p, _ = m.fit(rest, point if free == everything else start, free)
            out[held] = m.predict([held], p)[held]
        return out

    loo_pred = loo(everything)
    print(f"instance {args.instance}: {len(files)} files, constants fitted jointly: {', '.join(args.param)}")
    for i, p in enumerate(args.param):
        print(f"  {p} = {m.value(i, point[i]):.6g} (preset: {preset['calibration'][p]})")
    print(f"{'file':44s} {'measured(s)':>12s} {'fit(s)':>10s} {'err(%)':>7s} {'loo(s)':>10s} {'loo err(%)':>10s}")
    for f in files:
        print(f"{os.path.basename(f)[:-5]:44s} {m.measured[f]:12.4f} {fitted[f]:10.4f} "
              f"{m.error(f, fitted[f]):+7.2f} {loo_pred[f]:10.4f} {m.error(f, loo_pred[f]):+10.2f}")
    loo_err = [abs(m.error(f, loo_pred[f])) for f in files]
    print(f"in-sample:     mean |error| {mean:.2f} %, worst {worst:.2f} %")
    print(f"leave-one-out: mean |error| {sum(loo_err) / len(loo_err):.2f} %, worst {max(loo_err):.2f} %")
    if args.drop and len(args.param) > 1:
        for i, p in enumerate(args.param):
            free = [j for j in everything if j != i]
            pred = loo(free)
            e = [abs(m.error(f, pred[f])) for f in files]
            print(f"leave-one-out with {p} held at {preset['calibration'][p]}: mean |error| "
                  f"{sum(e) / len(e):.2f} %, worst {max(e):.2f} %")
    m.pool.shutdown()
    shutil.rmtree(scratch, ignore_errors=True)


def families(args):
    import calibration_families  # beside this file
    scratch = tempfile.mkdtemp(prefix="trnsim-calibrate-")
    args.trnsim = shutil.copy2(args.trnsim, os.path.join(scratch, "trnsim"))
    command = shlex.join(["tools/calibrate.py"] + sys.argv[1:])
    calibration_families.families_main(args, Model, BOUNDS, command)
    shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    main()
