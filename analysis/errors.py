"""The one exception type for bad input (a missing, foreign, interrupted or malformed file).

The command line turns it into a single line on stderr and exit code 2; any other exception is a bug
and keeps its traceback.
"""


class InputError(Exception):
    """Bad input: ``what`` names the file (or argument), ``problem`` says what is wrong with it."""

    def __init__(self, what, problem):
        self.what = str(what)
        self.problem = " ".join(str(problem).split())  # always one line
        super().__init__(f"{self.what}: {self.problem}")
