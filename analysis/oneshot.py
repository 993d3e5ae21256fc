"""What the scores of a one-shot run (GEMS and its baselines) were measured on.

A one-shot run's client scores (/summary/client_accuracy, as for every algorithm) are measured on the
model the algorithm ends with, and whether that model was fine-tuned on public data depends on the
algorithm and on ``gems.public_samples`` (docs/algorithms.md, "GEMS and one-shot baselines"):

* ``gems``, ``average``, ``global``: the final model, fine-tuned on ``gems.public_samples`` public
  samples (its last layer, ``gems.finetune_epochs`` epochs) when that is > 0;
* ``public_only``: a model trained on ``gems.public_samples`` public samples alone (0: the untrained
  initial model);
* ``oneshot_local``: each client's own local model; ``ensemble``: the majority vote of the local
  models. Neither is fine-tuned.

The test-set records are ``/gems/accuracy_before`` (no fine-tuning), ``/gems/accuracy_after`` (after
fine-tuning on ``gems.public_samples``; NaN when 0) and ``/gems/finetune/accuracy`` (after
fine-tuning on each size of ``gems.finetune_sizes``; size 0 = none).
"""

from __future__ import annotations

from typing import Optional

from .results import Run, normalise_algorithm
from .settings import is_one_shot

FINAL_MODEL = {"gems": "GEMS model", "average": "averaged model", "global": "pooled-data model"}


def public_samples(run: Run) -> int:
    return int(run.float_option("gems.public_samples", 0.0))


def finetunes(run: Run) -> bool:
    """Whether the final model of gems / average / global was fine-tuned on public samples."""
    return public_samples(run) > 0 and run.float_option("gems.finetune_epochs", 5.0) > 0


def client_finetune_samples(run: Run) -> Optional[int]:
    """Public samples the model behind the client scores was fine-tuned (public_only: trained) on;
    0 when it was not; None for an algorithm that is not one-shot."""
    if not is_one_shot(run):
        return None
    algo = normalise_algorithm(run.algorithm)
    if algo in ("ensemble", "oneshot_local"):
        return 0
    if algo == "public_only":
        return public_samples(run)
    return public_samples(run) if finetunes(run) else 0


def client_model(run: Run) -> str:
    """The model behind the client scores, e.g. "GEMS model, fine-tuned on 100 public samples";
    empty for an algorithm that is not one-shot."""
    if not is_one_shot(run):
        return ""
    algo = normalise_algorithm(run.algorithm)
    s = public_samples(run)
    if algo == "oneshot_local":
        return "each client's local model, not fine-tuned"
    if algo == "ensemble":
        return "vote of the local models, not fine-tuned"
    if algo == "public_only":
        return f"trained on {s} public samples only" if s > 0 else "the untrained initial model"
    base = FINAL_MODEL.get(algo, "final model")
    return f"{base}, fine-tuned on {s} public samples" if finetunes(run) else f"{base}, not fine-tuned"


def client_model_short(run: Run) -> str:
    """A tick label's worth of client_model: "fine-tuned, 100 public", "not fine-tuned", ..."""
    n = client_finetune_samples(run)
    if n is None:
        return ""
    if normalise_algorithm(run.algorithm) == "public_only":
        return f"{n} public samples only"
    return f"fine-tuned, {n} public" if n else "not fine-tuned"
