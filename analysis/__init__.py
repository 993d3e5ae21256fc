"""fedsilo analysis: read fedsilo results files (docs/results.md) and make tables and figures.

Run it as ``/usr/bin/python3 -m analysis <command> ...``; see docs/analysis.md.
"""

__all__ = ["InputError", "load_run", "Run"]

from .errors import InputError
from .results import Run, load_run
