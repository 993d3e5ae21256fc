#!/usr/bin/python3
"""Expands a hyper-parameter grid spec into sweep manifest lines (the jobs/sweep.manifest format:
"CONFIG ALGORITHM SEED [fedsilo options...]"), one per algorithm x value combination x seed, printed
on stdout or written with --out. jobs/local/sweep.sh and jobs/sweep.sbatch run the manifest (finished
runs skipped, interrupted ones resumed); `python3 -m analysis select` then picks each algorithm's
values by validation score and prints the final runs (docs/analysis.md, "select").

A spec is "key = value" lines (# comments and blank lines skipped):

    config     = configs/playerfl_fmnist.ini      # the configuration every run starts from
    algorithms = playerfl fedavg local            # whitespace-separated
    seeds      = 0                                # whitespace-separated integers
    options    = --rounds 20                      # fixed fedsilo options of every run (e.g. a reduction)
    train.lr   = 5e-3 1e-3 5e-4 1e-4              # any section.key: the values swept (cartesian product)

Each line is CONFIG ALGORITHM SEED, then --section.key value for every swept key (in the spec's order),
then the fixed options. "section.key @ algorithm = values" gives that algorithm its own values of a
swept key (the configuration files' "[section @ algorithm]" convention), for a rule such as the
PLayer-FL authors' 100 times larger grid for pFedMe's plain gradient steps:

    train.lr @ pfedme = 5e-1 1e-1 5e-2 1e-2

    /usr/bin/python3 jobs/grid.py jobs/grids/playerfl_fmnist_lr.grid [--out FILE]
"""

import argparse
import itertools
import sys

REQUIRED = ("config", "algorithms", "seeds")
FIXED = REQUIRED + ("options",)


class SpecError(Exception):
    pass


def parse_spec(text, name="spec"):
    """{key: value} in file order, values stripped; SpecError for a malformed line or a missing key."""
    spec = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        key, sep, value = line.partition("=")
        key, value = key.strip(), value.strip()
        if not sep or not key or not value:
            raise SpecError(f"{name}:{number}: expected 'key = value', got {raw.strip()!r}")
        option, at, algorithm = (part.strip() for part in key.partition("@"))
        key = f"{option} @ {algorithm}" if at else option
        if key in spec:
            raise SpecError(f"{name}:{number}: {key} given twice")
        if option not in FIXED and "." not in option:
            raise SpecError(f"{name}:{number}: unknown key {option!r} (expected {', '.join(FIXED)} or a "
                            f"section.key option to sweep)")
        if at and (option in FIXED or not algorithm):
            raise SpecError(f"{name}:{number}: {raw.strip()!r}: expected 'section.key @ algorithm = values'")
        spec[key] = value
    missing = [k for k in REQUIRED if k not in spec]
    if missing:
        raise SpecError(f"{name}: missing {', '.join(missing)}")
    for key in spec:
        option, _, algorithm = key.partition(" @ ")
        if algorithm and option not in spec:
            raise SpecError(f"{name}: {key}: {option} is not swept for every algorithm")
        if algorithm and algorithm not in spec["algorithms"].split():
            raise SpecError(f"{name}: {key}: {algorithm} is not in algorithms = {spec['algorithms']}")
    for seed in spec["seeds"].split():
        if not seed.isdigit():
            raise SpecError(f"{name}: seeds = {spec['seeds']}: expected non-negative integers")
    return spec


def swept_values(spec, algorithm):
    """[(section.key, values)] of one algorithm: each swept key's values, or its "@ algorithm" ones."""
    return [(k, spec.get(f"{k} @ {algorithm}", v).split()) for k, v in spec.items() if k not in FIXED and "@" not in k]


def manifest_lines(spec):
    """The manifest lines of a parsed spec, algorithm by algorithm, then value combination, then seed."""
    fixed = spec.get("options", "").split()
    lines = []
    for algorithm in spec["algorithms"].split():
        swept = swept_values(spec, algorithm)
        for values in itertools.product(*[vals for _, vals in swept]):
            options = [w for (key, _), value in zip(swept, values) for w in (f"--{key}", value)]
            for seed in spec["seeds"].split():
                lines.append(" ".join([spec["config"], algorithm, seed, *options, *fixed]))
    return lines


def main(argv=None):
    p = argparse.ArgumentParser(prog="jobs/grid.py", description="Expand a grid spec into sweep manifest lines.")
    p.add_argument("spec", help="grid spec file (key = value lines)")
    p.add_argument("--out", help="write the manifest to this file instead of stdout")
    args = p.parse_args(argv)
    try:
        with open(args.spec, encoding="utf-8") as fh:
            spec = parse_spec(fh.read(), args.spec)
    except OSError as exc:
        print(f"grid: error: {args.spec}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except SpecError as exc:
        print(f"grid: error: {exc}", file=sys.stderr)
        return 2
    text = f"# generated by jobs/grid.py from {args.spec}\n" + "".join(line + "\n" for line in manifest_lines(spec))
    if args.out:
        with open(args.out, "w", encoding="utf-8") as fh:
            fh.write(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
