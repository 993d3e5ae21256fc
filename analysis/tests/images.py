"""The documented figure sizes (figure size × 150 dpi) and the PNG check every plot test uses."""

import os

import matplotlib

matplotlib.use("Agg")
import matplotlib.image as mpimg  # noqa: E402
import numpy as np  # noqa: E402

SINGLE = (1200, 750)  # 8 x 5 in: sensitivity, gems-finetune
DOUBLE = (1950, 750)  # 13 x 5 in: accuracy-hist, oneshot, privacy-utility, scaling
TRIPLE = (2250, 750)  # 15 x 5 in: alpha-tradeoff
WIDE = (2100, 750)    # 14 x 5 in: convergence (two panels and the legend)
SIZE_OF_KIND = {"convergence": WIDE, "sensitivity": SINGLE, "accuracy": DOUBLE, "alpha": TRIPLE,
                "gems": SINGLE, "scaling": DOUBLE, "oneshot": DOUBLE, "privacy": DOUBLE}


def check_png(path, size):
    """A non-empty, non-blank PNG of (width, height) = size pixels."""
    assert os.path.getsize(path) > 1000, path
    img = mpimg.imread(str(path))
    assert (img.shape[1], img.shape[0]) == size, (path, img.shape)
    assert img.ndim == 3 and float(np.std(img[..., :3])) > 0.01, path  # not a blank canvas
