"""fedsilo analysis: read fedsilo results files (docs/results.md) and make tables and figures.

Run it as ``/usr/bin/python3 -m analysis <command> ...``; see docs/analysis.md. Importing the package
needs only the standard library, so that the command line can name a missing Debian package
(python3-numpy, python3-h5py, python3-matplotlib, python3-scipy) in one line instead of a traceback.
"""

__all__ = ["InputError", "load_run", "Run"]

from .errors import InputError


def __getattr__(name):
    if name in ("load_run", "Run"):
        from . import results

        return getattr(results, name)
    raise AttributeError(f"module 'analysis' has no attribute {name!r}")
