"""The figures. Every function writes a PNG of a fixed pixel size (figure size × dpi, no tight
bounding box), with ``pdf=True`` a PDF beside it and with ``csv=FILE`` the numbers it draws
(figdata.py); it returns the paths written."""

from .alpha import alpha_tradeoff, default_alphas, parse_alphas
from .common import DOUBLE, DPI, SINGLE, TRIPLE, WIDE, group_by_algorithm, legend_label, pixel_size
from .convergence import convergence, convergence_curves, seed_curves
from .gems import gems_finetune, oneshot
from .histogram import accuracy_bins, accuracy_hist, bounded_kde
from .privacy import privacy_utility
from .scaling import read_scaling_csv, scaling, scaling_series
from .sensitivity import normalised_cumulative_sensitivity, sensitivity, split_label

__all__ = [
    "DOUBLE", "DPI", "SINGLE", "TRIPLE", "WIDE", "accuracy_bins", "accuracy_hist", "alpha_tradeoff", "bounded_kde",
    "convergence", "convergence_curves", "default_alphas", "gems_finetune", "group_by_algorithm", "legend_label",
    "normalised_cumulative_sensitivity", "oneshot", "parse_alphas", "pixel_size", "privacy_utility",
    "read_scaling_csv", "scaling", "scaling_series", "seed_curves", "sensitivity", "split_label",
]
