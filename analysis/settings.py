"""Experiment settings: which runs belong to one comparison.

Two runs are of the same setting when they differ at most in algorithm, seed, algorithm options and
output / bookkeeping options. The signature (docs/analysis.md, "Settings") is built from

* the root attributes ``dataset``, ``model``, ``num_clients`` and ``num_rounds``; the number of rounds
  of a one-shot algorithm (ONE_SHOT: fixed by the algorithm, 1 or 2) is replaced by "one-shot";
* the keys of the resolved configuration (root attribute ``config``) in the sections that define the
  data, the model and the training: SETTING_SECTIONS, less IGNORED_KEYS, and only the keys present in
  every run compared (files of older fedsilo versions lack newer keys).
"""

from __future__ import annotations

from typing import Dict, List, Sequence, Tuple

from .results import Run, normalise_algorithm

# algorithms whose number of rounds is fixed by the algorithm (GEMS and its baselines)
ONE_SHOT = frozenset({"gems", "average", "ensemble", "oneshot_local", "global", "public_only"})
# configuration sections that define the setting; algorithm sections ([playerfl], [qffl], [gems], ...),
# [eval], [checkpoint] and [output] do not
SETTING_SECTIONS = ("data", "partition", "model", "train", "fl")
# keys of those sections that do not change the experiment: where the data files lie, and how clients
# are placed on ranks (results are identical under either placement)
IGNORED_KEYS = frozenset({"data.dir", "fl.placement"})

Signature = Tuple[Tuple[str, str], ...]


def is_one_shot(run: Run) -> bool:
    return normalise_algorithm(run.algorithm) in ONE_SHOT


def _rounds(run: Run) -> str:
    if is_one_shot(run):
        return "one-shot"
    if run.num_rounds is not None:
        return str(run.num_rounds)
    return run.config_items.get("rounds", "?")


def _config_keys(run: Run) -> Dict[str, str]:
    return {k: v for k, v in run.config_items.items()
            if k.split(".", 1)[0] in SETTING_SECTIONS and "." in k and k not in IGNORED_KEYS}


def signatures(runs: Sequence[Run]) -> List[Signature]:
    """The setting signature of each run, in the order given."""
    configs = [_config_keys(r) for r in runs]
    common = set.intersection(*[set(c) for c in configs]) if configs else set()
    out = []
    for r, c in zip(runs, configs):
        items = [("dataset", r.dataset), ("model", r.model), ("clients", str(r.num_clients)),
                 ("rounds", _rounds(r))]
        items += sorted((k, c[k]) for k in common)
        out.append(tuple(items))
    return out


def _base_label(sig: Signature) -> str:
    d = dict(sig)
    parts = [d["dataset"], d["model"], f"{d['clients']} clients"]
    if "partition.scheme" in d:
        parts.append(d["partition.scheme"])
    parts.append("one-shot" if d["rounds"] == "one-shot" else f"{d['rounds']} rounds")
    return " / ".join(parts)


def labels(sigs: Sequence[Signature]) -> Dict[Signature, str]:
    """A readable label per distinct signature, e.g. "fashion_mnist / mlp / 10 clients / dirichlet /
    20 rounds"; signatures that share that label get the keys in which they differ appended."""
    distinct = sorted(set(sigs))
    by_base: Dict[str, List[Signature]] = {}
    for s in distinct:
        by_base.setdefault(_base_label(s), []).append(s)
    out: Dict[Signature, str] = {}
    for base, group in by_base.items():
        if len(group) == 1:
            out[group[0]] = base
            continue
        dicts = [dict(s) for s in group]
        keys = sorted({k for d in dicts for k in d if len({x.get(k) for x in dicts}) > 1})
        for s, d in zip(group, dicts):
            out[s] = base + " (" + ", ".join(f"{k} = {d.get(k, '?')}" for k in keys) + ")"
    return out


def short_labels(names: Sequence[str]) -> Dict[str, str]:
    """{label: the label without the " / " parts that every one of ``names`` shares} (for legends)."""
    parts = {n: n.split(" / ") for n in set(names)}
    if len(parts) < 2 or len({len(p) for p in parts.values()}) != 1:
        return {n: n for n in parts}
    common = [i for i in range(len(next(iter(parts.values()))))
              if len({p[i] for p in parts.values()}) == 1]
    return {n: " / ".join(x for i, x in enumerate(p) if i not in common) for n, p in parts.items()}


def setting_labels(runs: Sequence[Run]) -> List[str]:
    """The setting label of each run, in the order given."""
    sigs = signatures(runs)
    names = labels(sigs)
    return [names[s] for s in sigs]


def group_by_setting(runs: Sequence[Run]) -> Dict[str, List[Run]]:
    """{setting label: runs}, settings sorted by label, runs in the order given."""
    groups: Dict[str, List[Run]] = {}
    for label, r in sorted(zip(setting_labels(runs), range(len(runs))), key=lambda x: (x[0], x[1])):
        groups.setdefault(label, []).append(runs[r])
    return groups
