"""Experiment settings: which runs belong to one comparison.

Two runs are of the same setting when they differ at most in algorithm, seed, algorithm options and
output / bookkeeping options. The signature (docs/analysis.md, "Settings") is built from

* the root attributes ``dataset``, ``model``, ``num_clients`` and ``num_rounds``; the number of rounds
  of a one-shot algorithm (ONE_SHOT: fixed by the algorithm, 1 or 2) is replaced by "one-shot";
* the keys of the resolved configuration (root attribute ``config``) in the sections that define the
  data, the model and the training: SETTING_SECTIONS, less IGNORED_KEYS, and only the keys present in
  every run compared (files of older fedsilo versions lack newer keys).

Within a setting, runs of one algorithm that differ in the algorithm options (the other sections but
BOOKKEEPING_SECTIONS: [gems], [qffl], [playerfl], ...) are distinct *variants*, labelled
"algorithm (key=value, ...)" (variant_labels); seeds of one variant pool.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from .results import Run, normalise_algorithm

# algorithms whose number of rounds is fixed by the algorithm (GEMS and its baselines)
ONE_SHOT = frozenset({"gems", "average", "ensemble", "oneshot_local", "global", "public_only"})
# configuration sections that define the setting; algorithm sections ([playerfl], [qffl], [gems], ...),
# [eval], [checkpoint] and [output] do not
SETTING_SECTIONS = ("data", "partition", "model", "train", "fl")
# keys of those sections that do not change the experiment: where the data files lie, and how clients
# are placed on ranks (results are identical under either placement)
IGNORED_KEYS = frozenset({"data.dir", "fl.placement"})
# sections that are neither part of the setting nor algorithm options: they never define a variant
BOOKKEEPING_SECTIONS = frozenset({"eval", "checkpoint", "output"})

Signature = Tuple[Tuple[str, str], ...]


def is_one_shot(run: Run) -> bool:
    return normalise_algorithm(run.algorithm) in ONE_SHOT


def _rounds(run: Run) -> str:
    if is_one_shot(run):
        return "one-shot"
    if run.num_rounds is not None:
        return str(run.num_rounds)
    return run.config_items.get("rounds", "?")


def _config_keys(run: Run, setting: bool = True) -> Dict[str, str]:
    """The "section.key" items of the setting sections (``setting``) or of the algorithm sections."""
    return {k: v for k, v in run.config_items.items() if "." in k and k not in IGNORED_KEYS
            and (k.split(".", 1)[0] in SETTING_SECTIONS) == setting
            and k.split(".", 1)[0] not in BOOKKEEPING_SECTIONS}


def signatures(runs: Sequence[Run], leave_out: Sequence[str] = ()) -> List[Signature]:
    """The setting signature of each run, in the order given, without the keys in ``leave_out`` (the
    tuned parameters of a grid)."""
    configs = [_config_keys(r) for r in runs]
    common = set.intersection(*[set(c) for c in configs]) if configs else set()
    out = []
    for r, c in zip(runs, configs):
        items = [("dataset", r.dataset), ("model", r.model), ("clients", str(r.num_clients)),
                 ("rounds", _rounds(r))]
        items += sorted((k, c[k]) for k in common if k not in leave_out)
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


def variant_labels(runs: Sequence[Run]) -> List[str]:
    """The variant label of each run, in the order given: its algorithm, followed by
    "(key=value, ...)" when runs of that algorithm in one setting differ in algorithm options.

    The keys listed for an algorithm are those (present in all of them) in which its runs differ within
    some setting, so one variant has one label in every setting; keys are sorted and shown without
    their section when no other listed key has the same name."""
    options = [_config_keys(r, setting=False) for r in runs]
    groups: Dict[Tuple[str, str], List[int]] = {}
    for i, (r, s) in enumerate(zip(runs, setting_labels(runs))):
        groups.setdefault((s, r.algorithm), []).append(i)
    differing: Dict[str, set] = {}
    for (_, algo), idx in groups.items():
        common = set.intersection(*[set(options[i]) for i in idx])
        differing.setdefault(algo, set()).update(k for k in common if len({options[i][k] for i in idx}) > 1)
    out = []
    for r, opts in zip(runs, options):
        keys = sorted(differing[r.algorithm])
        names = [k.split(".", 1)[1] for k in keys]
        parts = [(n if names.count(n) == 1 else k) + "=" + (opts[k] or '""')
                 for k, n in zip(keys, names) if k in opts]
        out.append(f"{r.algorithm} ({', '.join(parts)})" if parts else r.algorithm)
    return out


def group_by_variant(runs: Sequence[Run]) -> Dict[str, Dict[str, List[Run]]]:
    """{setting label: {variant label: runs}}, settings and variants sorted by label, runs in the order
    given."""
    groups: Dict[str, Dict[str, List[Run]]] = {}
    for s, v, i in sorted(zip(setting_labels(runs), variant_labels(runs), range(len(runs)))):
        groups.setdefault(s, {}).setdefault(v, []).append(runs[i])
    return groups


def baseline_variant(variants: Dict[str, List[Run]], algorithm: str) -> Tuple[List[Run], Optional[str]]:
    """(runs, note) of the variant of ``algorithm`` (normalised name) that one setting's other runs are
    compared against, among that setting's {variant label: runs}. With several variants it is the one
    whose algorithm options most of the setting's other runs share (options an algorithm does not use
    keep fedsilo's defaults there), ties by label, and the note says so; ([], None) without one."""
    mine = {v: rs for v, rs in variants.items() if normalise_algorithm(rs[0].algorithm) == algorithm}
    if len(mine) < 2:
        return next(iter(mine.values()), []), None
    opts = {v: _config_keys(rs[0], setting=False) for v, rs in mine.items()}
    keys = {k for o in opts.values() for k in o if len({p.get(k) for p in opts.values()}) > 1}
    others = [_config_keys(r, setting=False) for v, rs in variants.items() if v not in mine for r in rs]
    best = max(sorted(mine), key=lambda v: sum(o.get(k) == opts[v].get(k) for o in others for k in keys))
    return mine[best], (f"{len(mine)} {algorithm} variants in this setting ({'; '.join(sorted(mine))}); "
                        f"{best} is used, the one whose options most other runs of the setting share")
