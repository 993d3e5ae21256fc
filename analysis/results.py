"""Reading one fedsilo results file (the layout is specified in docs/results.md).

``load_run`` validates the file (exists, is HDF5, has a root attribute ``format`` starting with
``fedsilo-results``, is not an interrupted ``.partial`` run) and reads everything the analysis needs
into a :class:`Run`. The large ``/model`` group is never read.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from functools import cached_property
from typing import Dict, List, Optional, Tuple

import numpy as np

from . import metrics as M
from .errors import InputError

FORMAT_PREFIX = "fedsilo-results"


def _text(value) -> str:
    """An HDF5 string (fixed-length -> numpy.bytes_, variable-length -> str) as a Python str."""
    if isinstance(value, np.ndarray):
        if value.shape == ():
            value = value[()]
        elif value.size == 1:
            value = value.reshape(-1)[0]
    if isinstance(value, (bytes, np.bytes_)):
        return bytes(value).decode("utf-8", errors="replace").rstrip("\x00")
    return str(value)


def _texts(values) -> List[str]:
    return [_text(v) for v in np.asarray(values).reshape(-1)]


def _int(value) -> Optional[int]:
    if value is None:
        return None
    arr = np.asarray(value).reshape(-1)
    if arr.size == 0:
        return None
    try:
        return int(arr[-1])
    except (TypeError, ValueError):
        return None


def _float(value) -> float:
    arr = np.asarray(value, dtype=float).reshape(-1)
    return float(arr[-1]) if arr.size else float("nan")


@dataclass
class Run:
    """What the analysis needs from one results file. Arrays are float64; K = number of clients."""

    path: str
    algorithm: str
    dataset: str
    model: str
    seed: int
    num_clients: int
    num_ranks: Optional[int]
    num_rounds: Optional[int]
    version: str
    format: str
    config: str
    # final round, per client [K]
    client_accuracy: np.ndarray
    client_f1: np.ndarray
    client_loss: np.ndarray
    num_train: Optional[np.ndarray]
    global_accuracy: float
    # /rounds: name -> array ([T] or [T, K])
    rounds: Dict[str, np.ndarray] = field(default_factory=dict)
    # /summary scalars as stored by fedsilo (for cross-checks; tables recompute them)
    stored_summary: Dict[str, float] = field(default_factory=dict)
    # every per-client /summary dataset by name ([K]: client_val_accuracy, selected_round, ...)
    summary_per_client: Dict[str, np.ndarray] = field(default_factory=dict)
    sensitivity_layers: Optional[List[str]] = None
    sensitivity: Dict[str, np.ndarray] = field(default_factory=dict)  # stage -> [K, L]
    split_layer: Optional[Tuple[int, str]] = None  # (p federated blocks, name)
    alpha: Optional[float] = None  # /alpha_fedavg/alpha
    # other /alpha_fedavg records: efficiency_target, search_round (as float), when present
    alpha_records: Dict[str, float] = field(default_factory=dict)
    alpha_excluded: Optional[np.ndarray] = None  # /alpha_fedavg/excluded [K] as bool: left out by the report check
    gems_finetune: Optional[Tuple[np.ndarray, np.ndarray]] = None  # (samples, accuracy)
    # other /gems scalars of the one-shot algorithms: accuracy_before, accuracy_after, when present
    gems_records: Dict[str, float] = field(default_factory=dict)
    # /gems/client_accuracy [K]: the one-shot algorithm's own evaluation of its final model per client
    gems_client_accuracy: Optional[np.ndarray] = None
    # /privacy/epsilon: [T] (client level) or [T, K] (sample level, per client); None without privacy
    privacy_epsilon: Optional[np.ndarray] = None
    # things a reader should know about this file (printed by the command line as warnings)
    warnings: List[str] = field(default_factory=list)

    @property
    def label(self) -> str:
        return f"{self.algorithm} ({self.dataset}, seed {self.seed})"

    @property
    def seconds_per_round(self) -> float:
        """/summary/seconds_per_round as fedsilo stored it; the median of the finite /rounds/seconds
        only when the file has no such scalar."""
        stored = self.stored_summary.get("seconds_per_round")
        if stored is not None:
            return stored
        sec = self.rounds.get("seconds")
        if sec is None or sec.size == 0:
            return float("nan")
        sec = sec[np.isfinite(sec)]
        return float(np.median(sec)) if sec.size else float("nan")

    def evaluated_rounds(self, name: str = "client_accuracy") -> Tuple[np.ndarray, np.ndarray]:
        """(round indices, rows) of /rounds/<name> [T, K] restricted to evaluated rounds.

        /rounds may hold one row per evaluated round or one row per round with NaN metrics in the
        rounds that were not evaluated (eval.every > 1); only rows with at least one finite value are
        kept. Round indices come from /rounds/round, or 0..T-1 when it is missing or of another length.
        """
        rows = self.rounds.get(name)
        if rows is None or rows.ndim != 2 or rows.shape[0] == 0:
            return np.zeros(0), np.zeros((0, 0))
        rnd = self.rounds.get("round")
        rnd = (np.arange(rows.shape[0], dtype=float) if rnd is None or rnd.size != rows.shape[0]
               else rnd.reshape(-1))
        keep = np.isfinite(rows).any(axis=1)
        return rnd[keep], rows[keep]

    @cached_property
    def config_items(self) -> Dict[str, str]:
        """The root attribute ``config`` (INI text) as {"key" or "section.key": value}; parsed once per
        run (settings and variants read it for every grouping). Read-only by convention."""
        return parse_config(self.config)

    def option(self, key: str, default: Optional[str] = None) -> Optional[str]:
        """One key of the resolved configuration ("section.key"), ``default`` when the file lacks it."""
        return self.config_items.get(key, default)

    def client_mean(self, values) -> float:
        """The mean over clients of one value per client, weighted as the run's own summary mean: by
        /clients/num_train under eval.client_weighting = samples (the PLayer-FL protocol), otherwise
        uniformly. Clients whose value is not finite are left out; NaN when none is left."""
        v = np.asarray(values, dtype=float).reshape(-1)
        if self.option("eval.client_weighting") == "samples" and self.num_train is not None \
                and self.num_train.size == v.size:
            return M.efficiency(v, self.num_train)
        return M.mean(v)

    def float_option(self, key: str, default: float) -> float:
        """A numeric configuration key; ``default`` when absent or not a number."""
        try:
            return float(self.config_items[key])
        except (KeyError, ValueError):
            return default

    def bool_option(self, key: str, default: bool = False) -> bool:
        value = self.config_items.get(key)
        if value is None:
            return default
        return value.strip().lower() in ("true", "1", "yes", "on")

    @property
    def is_alpha_fedavg(self) -> bool:
        return self.alpha is not None or normalise_algorithm(self.algorithm) == "alpha_fedavg"

    @property
    def epsilon(self) -> float:
        """The run's privacy loss ε: the last finite value of /privacy/epsilon [T]; for a per-client
        [T, K] record (sample-level DP) the largest client's value in the last row with one. NaN when
        the run has no privacy record (privacy off)."""
        eps = self.privacy_epsilon
        if eps is None or eps.size == 0:
            return float("nan")
        rows = eps.reshape(eps.shape[0], -1)
        for row in rows[::-1]:
            row = row[np.isfinite(row)]
            if row.size:
                return float(row.max())
        return float("nan")


def parse_config(text: str) -> Dict[str, str]:
    """INI text as written by fedsilo (``key = value`` lines, ``[section]`` headers, ``#`` comments)
    -> {"key": value} for top-level keys and {"section.key": value} below a section header."""
    items: Dict[str, str] = {}
    section = ""
    for raw in text.splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        key, sep, value = line.partition("=")
        if not sep:
            continue
        key = key.strip()
        items[f"{section}.{key}" if section else key] = value.strip()
    return items


def _last_finite(values: Optional[np.ndarray]) -> float:
    if values is None:
        return float("nan")
    v = np.asarray(values, dtype=float).reshape(-1)
    v = v[np.isfinite(v)]
    return float(v[-1]) if v.size else float("nan")


def _sensitivity_matrix(path: str, stage: str, values: np.ndarray, num_layers: Optional[int]) -> np.ndarray:
    """/sensitivity/<stage> as [K, L]. fedsilo writes a 1-D [K] array when the model has one block
    (L = 1); a 1-D array is read as [K, 1] when L = 1 and as one client's [1, L] when its length is L."""
    a = np.asarray(values, dtype=float)
    if a.ndim == 2:
        return a
    if a.ndim == 0:
        return a.reshape(1, 1)
    if a.ndim == 1:
        if num_layers == 1 or num_layers is None:
            return a.reshape(-1, 1)
        if a.size == num_layers:
            return a.reshape(1, -1)
    raise InputError(path, f"malformed /sensitivity/{stage} (shape {a.shape}, {num_layers} layer block(s))")


def normalise_algorithm(name: str) -> str:
    return name.strip().lower().replace("-", "_")


def check_path(path: str) -> None:
    """Raise InputError for a path that cannot be a complete fedsilo results file."""
    if path.endswith(".partial"):
        raise InputError(
            path,
            "interrupted run: a .partial file is renamed to its final name only when the run "
            "completes, so its contents are incomplete",
        )
    if not os.path.exists(path):
        raise InputError(path, "no such file")
    if os.path.isdir(path):
        raise InputError(path, "is a directory, not a results file")


def load_run(path) -> Run:
    path = os.fspath(path)
    check_path(path)
    import h5py  # imported here so that `--help` stays fast

    try:
        if not h5py.is_hdf5(path):
            raise InputError(path, "not a fedsilo results file (not an HDF5 file)")
        f = h5py.File(path, "r")
    except InputError:
        raise
    except OSError as exc:
        raise InputError(path, f"cannot open: {exc.strerror or exc}")
    try:
        with f:
            run = _read(path, f)
        run.warnings.extend(_client_score_warnings(run))
        return run
    except InputError:
        raise
    except (OSError, KeyError, ValueError, TypeError, AttributeError) as exc:
        raise InputError(path, f"malformed fedsilo results file ({type(exc).__name__}: {exc})")


def _playerfl_records(f) -> dict:
    ds = f["playerfl"]["split_layer"] if "playerfl" in f and "split_layer" in f["playerfl"] else None
    p = None if ds is None else _int(ds[()])
    if p is None:
        return {}
    name = ds.attrs.get("name")
    return {"split_layer": (p, _text(name) if name is not None else "")}


def _alpha_records(f) -> dict:
    if "alpha_fedavg" not in f:
        return {}
    g = f["alpha_fedavg"]
    out = {"alpha_records": {name: _float(g[name][()]) for name in ("efficiency_target", "search_round")
                             if name in g}}
    if "alpha" in g:
        out["alpha"] = _float(g["alpha"][()])
    elif "alpha" in g.attrs:
        out["alpha"] = _float(g.attrs["alpha"])
    if "excluded" in g:
        out["alpha_excluded"] = np.asarray(g["excluded"][()]).reshape(-1) != 0
    return out


def _gems_records(path: str, f) -> dict:
    if "gems" not in f:
        return {}
    g = f["gems"]
    out = {"gems_records": {name: _float(g[name][()]) for name in ("accuracy_before", "accuracy_after") if name in g}}
    if "client_accuracy" in g:
        out["gems_client_accuracy"] = np.asarray(g["client_accuracy"][()], dtype=float).reshape(-1)
    if "finetune" in g:
        ft = g["finetune"]
        if "samples" not in ft or "accuracy" not in ft:
            raise InputError(path, "malformed /gems/finetune (needs datasets 'samples' and 'accuracy')")
        samples = np.asarray(ft["samples"][()], dtype=float).reshape(-1)
        acc = np.asarray(ft["accuracy"][()], dtype=float).reshape(-1)
        if samples.size != acc.size:
            raise InputError(path, f"malformed /gems/finetune (samples has {samples.size} entries, accuracy "
                                   f"{acc.size})")
        out["gems_finetune"] = (samples, acc)
    return out


def _algorithm_records(path: str, f) -> dict:
    """The Run fields read from the algorithm groups (/playerfl, /alpha_fedavg, /gems) and /privacy."""
    out = {**_playerfl_records(f), **_alpha_records(f), **_gems_records(path, f)}
    if "privacy" in f and "epsilon" in f["privacy"]:
        eps = np.asarray(f["privacy"]["epsilon"][()], dtype=float)
        out["privacy_epsilon"] = eps.reshape(1) if eps.ndim == 0 else eps
    return out


def _read(path: str, f) -> Run:
    fmt = f.attrs.get("format")
    if fmt is None:
        raise InputError(path, "not a fedsilo results file (no root attribute 'format')")
    fmt = _text(fmt)
    if not fmt.startswith(FORMAT_PREFIX):
        raise InputError(
            path, f"not a fedsilo results file (root attribute format = {fmt!r}, expected '{FORMAT_PREFIX}-N')"
        )

    def attr(name, default=""):
        v = f.attrs.get(name)
        return default if v is None else v

    rounds: Dict[str, np.ndarray] = {}
    if "rounds" in f and hasattr(f["rounds"], "keys"):
        for name, ds in f["rounds"].items():
            if hasattr(ds, "shape") and ds.dtype.kind in "biuf":
                rounds[name] = np.asarray(ds[()], dtype=float)

    stored: Dict[str, float] = {}
    per_client: Dict[str, np.ndarray] = {}
    if "summary" in f:
        for name, ds in f["summary"].items():
            if not hasattr(ds, "shape") or ds.dtype.kind not in "biuf":
                continue
            if ds.shape == ():
                stored[name] = float(ds[()])
            else:
                per_client[name] = np.asarray(ds[()], dtype=float).reshape(-1)

    def final(name: str) -> Optional[np.ndarray]:
        if name in per_client:
            return per_client[name]
        rows = rounds.get(name)
        if rows is not None and rows.ndim == 2 and rows.shape[0] > 0:
            # the last evaluated round: rows of rounds without evaluation are all NaN
            evaluated = np.flatnonzero(np.isfinite(rows).any(axis=1))
            return rows[evaluated[-1] if evaluated.size else -1].copy()
        return None

    acc = final("client_accuracy")
    if acc is None:
        raise InputError(
            path,
            "malformed fedsilo results file (neither /summary/client_accuracy nor a row of "
            "/rounds/client_accuracy)",
        )
    k = acc.size
    f1 = final("client_f1")
    loss = final("client_loss")
    nan_k = np.full(k, np.nan)
    f1 = nan_k.copy() if f1 is None or f1.size != k else f1
    loss = nan_k.copy() if loss is None or loss.size != k else loss

    num_train = None
    if "clients" in f and "num_train" in f["clients"]:
        num_train = np.asarray(f["clients"]["num_train"][()], dtype=float).reshape(-1)
        if num_train.size != k:
            raise InputError(path, f"malformed fedsilo results file (/clients/num_train has "
                                   f"{num_train.size} rows, /summary/client_accuracy has {k})")

    if "global_accuracy" in stored:
        gacc = stored["global_accuracy"]
    else:
        gacc = _last_finite(rounds.get("global_accuracy"))

    sens_layers = None
    sens: Dict[str, np.ndarray] = {}
    if "sensitivity" in f:
        g = f["sensitivity"]
        if "layers" in g:
            sens_layers = _texts(g["layers"][()])
        n_layers = len(sens_layers) if sens_layers is not None else None
        if n_layers is None and "model" in f and "layers" in f["model"] and "name" in f["model"]["layers"]:
            n_layers = int(np.asarray(f["model"]["layers"]["name"]).size)
        for stage in ("round0", "final"):
            if stage in g:
                sens[stage] = _sensitivity_matrix(path, stage, g[stage][()], n_layers)

    records = _algorithm_records(path, f)
    return Run(
        path=path,
        algorithm=_text(attr("algorithm", "?")),
        dataset=_text(attr("dataset", "?")),
        model=_text(attr("model", "?")),
        seed=_int(attr("seed", None)) if _int(attr("seed", None)) is not None else -1,
        num_clients=_int(attr("num_clients", None)) or k,
        num_ranks=_int(attr("num_ranks", None)),
        num_rounds=_int(attr("num_rounds", None)),
        version=_text(attr("version", "")),
        format=fmt,
        config=_text(attr("config", "")),
        client_accuracy=acc,
        client_f1=f1,
        client_loss=loss,
        num_train=num_train,
        global_accuracy=gacc,
        rounds=rounds,
        stored_summary=stored,
        summary_per_client=per_client,
        sensitivity_layers=sens_layers,
        sensitivity=sens,
        **records,
    )


def _client_score_warnings(run: Run) -> List[str]:
    """The client score of every algorithm is /summary/client_accuracy. A one-shot file also holds
    /gems/client_accuracy, the algorithm's own evaluation of its final model on each client's test
    split; when the two disagree, the file's client scores are not the final model's (files of
    fedsilo versions that stored each client's local model there for the ensemble), and the reader
    is told so."""
    own = run.gems_client_accuracy
    if own is None or own.size != run.client_accuracy.size:
        return []
    if np.allclose(own, run.client_accuracy, rtol=0.0, atol=1e-12, equal_nan=True):
        return []
    return [f"{run.path}: the client scores (/summary/client_accuracy, mean {np.nanmean(run.client_accuracy):.4f}) "
            f"differ from {run.algorithm}'s own evaluation of its final model on each client "
            f"(/gems/client_accuracy, mean {np.nanmean(own):.4f}); tables and figures use /summary/client_accuracy: "
            f"rerun this file with a fedsilo that stores the final model's scores there"]


def load_runs(paths) -> List[Run]:
    return [load_run(p) for p in paths]
