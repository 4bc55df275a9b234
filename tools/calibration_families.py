"""`tools/calibrate.py --families OUT.json`: error statistics per prediction family, the record
`trnsim run` and `trnsim validate` read (configs/calibration/families.json).

A family is chip x software preset x collective runtime release, as `trnsim run FILE --dry-run`
resolves them (cluster.chip.name, software.preset, software.collectives.release; the C++ twin is
config::prediction_family). Per family: rows; in-sample mean and worst |error| at the presets'
values (what `trnsim validate` prints); leave-one-out (each row predicted by its chip's --fit
constants fitted on every other row of the chip); leave-one-family-out (each row predicted by the
constants fitted on the chip's rows of other families; none where the chip has no other family).
A chip without --fit has nothing fitted: each of its predictions is already out of sample, so its
leave-one-out and leave-one-family-out predictions are the in-sample ones. Errors in percent.
"""
import datetime
import json
import os
import subprocess
import sys
import types


def family_of(resolved):
    """(chip, software, release, name) of a resolved experiment (`trnsim run --dry-run`)."""
    chip = resolved["cluster"]["chip"]["name"]
    software = resolved["software"]["preset"]
    release = resolved["software"].get("collectives", {}).get("release", "")
    return chip, software, release, family_name(chip, software, release)


def family_name(chip, software, release):
    """The family's name: "Trainium x neuronx-distributed@2.19", "A100-SXM4-80GB x megatron-lm-2021"."""
    return f"{chip} x {software}" + (f"@{release}" if release else "")


def parse_fit(specs, bounds):
    """--fit CHIP=P[,Q] -> {chip: [P, Q]}."""
    out = {}
    for spec in specs:
        chip, sep, params = spec.partition("=")
        names = [p for p in params.split(",") if p]
        if not sep or not chip or not names:
            raise ValueError(f"--fit {spec}: expected CHIP=PARAM[,PARAM], e.g. Trainium=task_overhead_us")
        for p in names:
            if p not in bounds:
                raise ValueError(f"--fit {spec}: unknown constant {p} (known: {', '.join(sorted(bounds))})")
        out[chip] = names
    return out


def stats(errors):
    """Mean and worst (signed, largest magnitude, first on ties) of percent errors."""
    worst = 0.0
    for e in errors:
        if abs(e) > abs(worst):
            worst = e
    return {"mean_abs_error_pct": round(sum(abs(e) for e in errors) / len(errors), 3),
            "worst_error_pct": round(worst, 3)}


def dry_run(trnsim, path):
    proc = subprocess.run([trnsim, "run", path, "--dry-run"], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          text=True)
    if proc.returncode != 0:
        sys.exit(f"calibrate: trnsim run {path} --dry-run failed (exit {proc.returncode}): {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def chip_figures(model_class, args, chip, files, params, resolved):
    """Per file of one chip: in-sample, leave-one-out and leave-one-family-out predictions (s).
    With --calibrated, the fits use only those files (the rows the presets' constants were fitted
    on); every file is still predicted."""
    fit_on = set(args.calibrated) if args.calibrated else None
    usable = (lambda fs: [f for f in fs if f in fit_on]) if fit_on is not None else (lambda fs: fs)
    sub = types.SimpleNamespace(param=params, step=args.step, files=files, jobs=args.jobs, trnsim=args.trnsim)
    m = model_class(sub)
    presets = {p: float(resolved[files[0]]["cluster"]["calibration"][p]) for p in params}
    for f in files:
        for p in params:
            if float(resolved[f]["cluster"]["calibration"][p]) != presets[p]:
                sys.exit(f"calibrate: {f}: /cluster/calibration/{p}: expected {presets[p]} as every {chip} row, "
                         f"found {resolved[f]['cluster']['calibration'][p]}")
    start = tuple(m.index(i, presets[p]) for i, p in enumerate(params))
    for i, p in enumerate(params):
        if abs(m.value(i, start[i]) - presets[p]) > 1e-9 * max(1.0, abs(presets[p])):
            sys.exit(f"calibrate: {chip}: {p} = {presets[p]} is not on the lattice (--step {args.step})")
    everything = list(range(len(params)))
    in_sample = m.predict(files, start)
    family = {f: family_of(resolved[f])[3] for f in files}
    loo, lofo, lofo_fits = {}, {}, {}
    for held in files:
        rest = usable([f for f in files if f != held])
        if not params or not rest:  # nothing fitted, or nothing to fit on: the preset's prediction
            loo[held] = in_sample[held]
            continue
        p, _ = m.fit(rest, start, everything)
        loo[held] = m.predict([held], p)[held]
    for name in sorted(set(family.values())):
        rest = usable([f for f in files if family[f] != name])
        if not rest or not params:
            continue
        p, _ = m.fit(rest, start, everything)
        lofo_fits[name] = {q: round(m.value(i, p[i]), 6) for i, q in enumerate(params)}
        mine = [f for f in files if family[f] == name]
        lofo.update(m.predict(mine, p))
    m.pool.shutdown()
    return m, presets, in_sample, loo, lofo, lofo_fits


def families_main(args, model_class, bounds, command):
    try:
        fit = parse_fit(args.fit or [], bounds)
    except ValueError as e:
        sys.exit(f"calibrate: {e}")
    resolved = {f: dry_run(args.trnsim, f) for f in args.files}
    chips = {}
    for f in args.files:
        chips.setdefault(family_of(resolved[f])[0], []).append(f)
    for chip in fit:
        if chip not in chips:
            sys.exit(f"calibrate: --fit {chip}=...: no file runs on this chip (chips: {', '.join(sorted(chips))})")
    rows, fits, lofo_fits_all = {}, [], {}
    for chip in sorted(chips):
        params = fit.get(chip, [])
        m, presets, ins, loo, lofo, lofo_fits = chip_figures(model_class, args, chip, chips[chip], params, resolved)
        fits.append({"chip": chip, "fitted": params, "preset_values": presets})
        lofo_fits_all.update(lofo_fits)
        for f in chips[chip]:
            rows[f] = {"id": resolved[f].get("id") or os.path.basename(f)[:-5], "file": f,
                       "measured_s": m.measured[f], "predicted_s": ins[f], "error_pct": m.error(f, ins[f]),
                       "leave_one_out_s": loo[f] if params else ins[f],
                       "leave_one_family_out_s": (lofo.get(f) if params else ins[f])}
            r = rows[f]
            r["leave_one_out_error_pct"] = m.error(f, r["leave_one_out_s"])
            lf = r["leave_one_family_out_s"]
            r["leave_one_family_out_error_pct"] = None if lf is None else m.error(f, lf)
    families = {}
    for f in args.files:
        chip, software, release, name = family_of(resolved[f])
        families.setdefault(name, {"family": name, "chip": chip, "software": software, "release": release,
                                   "files": []})["files"].append(f)
    out_families, cross = [], []
    for name in sorted(families):
        fam = families[name]
        mine = [rows[f] for f in fam["files"]]
        entry = {k: fam[k] for k in ("family", "chip", "software", "release")}
        entry["rows"] = len(mine)
        entry["in_sample"] = stats([r["error_pct"] for r in mine])
        entry["leave_one_out"] = stats([r["leave_one_out_error_pct"] for r in mine])
        if all(r["leave_one_family_out_error_pct"] is not None for r in mine):
            entry["leave_one_family_out"] = stats([r["leave_one_family_out_error_pct"] for r in mine])
            entry["leave_one_family_out"]["fitted"] = lofo_fits_all.get(name, {})
            cross += [r["leave_one_family_out_error_pct"] for r in mine]
        else:
            entry["leave_one_family_out"] = None
            entry["note"] = "no other family on this chip"
        entry["per_row"] = [{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.items()} for r in mine]
        out_families.append(entry)
    doc = {
        "description": "Error statistics per prediction family (chip x software preset x collective runtime "
                       "release), read by trnsim run and trnsim validate (README, 'Calibration'). Errors in percent "
                       "of the measured step time.",
        "command": command,
        "date": datetime.date.today().isoformat(),
        "lattice_step": args.step,
        "chips": fits,
        "families": out_families,
        "cross_family": dict(stats(cross), rows=len(cross)) if cross else None,
    }
    tmp = args.families + ".tmp"
    with open(tmp, "w") as fh:
        fh.write(json.dumps(doc, indent=2) + "\n")
    os.replace(tmp, args.families)
    for e in out_families:
        lofo = e["leave_one_family_out"]
        print(f"{e['family']:48s} {e['rows']:3d} row{'s' if e['rows'] != 1 else ' '}  in-sample {e['in_sample']['mean_abs_error_pct']:6.2f} % "
              f"(worst {e['in_sample']['worst_error_pct']:+.2f})  loo {e['leave_one_out']['mean_abs_error_pct']:6.2f} %  "
              + (f"lofo {lofo['mean_abs_error_pct']:6.2f} % (worst {lofo['worst_error_pct']:+.2f})" if lofo
                 else "lofo -: no other family on this chip"))
    if doc["cross_family"]:
        c = doc["cross_family"]
        print(f"cross-family (leave-one-family-out, {c['rows']} rows): mean |error| {c['mean_abs_error_pct']:.2f} %, "
              f"worst {c['worst_error_pct']:+.2f} %")
