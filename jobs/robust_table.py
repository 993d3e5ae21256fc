#!/usr/bin/python3
"""The Byzantine study's table (docs/robustness.md, "Study"): reads every results file of the
robust_fmnist sweeps under the folder given (jobs/grids/robust_fmnist*.grid), takes each run's final
global test accuracy and the options it ran with (the resolved configuration in the file's `config`
attribute), and prints a CSV: partition, attack, malicious, aggregator, runs, mean and std accuracy.

    /usr/bin/python3 jobs/robust_table.py out/ > docs/robustness_fmnist.csv
"""

import collections
import configparser
import pathlib
import sys

import h5py
import numpy as np


def options(f):
    text = f.attrs["config"]
    text = text.decode() if isinstance(text, bytes) else text
    parser = configparser.ConfigParser()
    parser.read_string("[top]\n" + text)
    get = lambda section, key, default: parser.get(section, key, fallback=default)
    return (get("partition", "scheme", "?"), get("attack", "kind", "none"), int(get("attack", "clients", "0")),
            get("fl", "aggregator", "mean"))


def main(folder):
    runs = collections.defaultdict(list)
    for path in sorted(pathlib.Path(folder).glob("robust_fmnist_*.h5")):
        with h5py.File(path, "r") as f:
            if f.attrs.get("config") is None:
                continue
            runs[options(f)].append(float(f["rounds/global_accuracy"][-1]))
    print("partition,attack,malicious,aggregator,runs,accuracy_mean,accuracy_std")
    for key in sorted(runs):
        acc = np.array(runs[key])
        print(",".join(map(str, key)) + f",{len(acc)},{acc.mean():.4f},{acc.std():.4f}")


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "out")
