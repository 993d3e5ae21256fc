"""Display names of the algorithms, for figures: code names (the root attribute ``algorithm``) stay in
tables and CSV files, where scripts read them; a figure a paper reader sees names "α-FedAvg", not
"alpha_fedavg"."""

from __future__ import annotations

DISPLAY = {
    "fedavg": "FedAvg",
    "local": "Local",
    "alpha_fedavg": "α-FedAvg",
    "qffl": "q-FFL",
    "fedfa": "FedFa",
    "playerfl": "PLayer-FL",
    "playerfl_random": "PLayer-FL-Random",
    "fedprox": "FedProx",
    "pfedme": "pFedMe",
    "ditto": "Ditto",
    "fedbabu": "FedBABU",
    "fedlp": "FedLP",
    "gems": "GEMS",
    "average": "Naive average",
    "ensemble": "Ensemble (vote)",
    "oneshot_local": "Local (one-shot)",
    "global": "Global (pooled data)",
    "public_only": "Public data only",
}


def display_name(algorithm: str) -> str:
    """"alpha_fedavg" -> "α-FedAvg"; an unknown name is returned as it is."""
    return DISPLAY.get(algorithm.strip().lower().replace("-", "_"), algorithm)


def display_label(label: str) -> str:
    """A variant label "qffl (q=0)" -> "q-FFL (q=0)": the algorithm part is replaced, options kept."""
    head, sep, rest = label.partition(" (")
    return display_name(head) + (sep + rest if sep else "")
