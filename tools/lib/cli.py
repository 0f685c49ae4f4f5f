# SPDX-License-Identifier: GPL-2.0
"""What every tool shares as a command: its exit codes, ToolError and
run_main, and one-line messages on stderr.

Every tool reports problems by raising ToolError; main() wrappers (run_main)
print its message as one line prefixed with the tool's name and exit with its
code, so that a user sees what went wrong and what to do next.
"""

import shutil
import sys
from collections.abc import Callable
from typing import NoReturn

# Where a function says what it does: print, or cli.info under a name.
Log = Callable[[str], object]

# Exit codes shared by all tools (documented in README.md).
EXIT_OK = 0
EXIT_FAIL = 1       # tests failed, or the checked thing is wrong
EXIT_USAGE = 2      # bad arguments or bad input files
EXIT_ENV = 3        # the environment is missing something (package, tree)
EXIT_REFUSED = 4    # refused to touch a kernel tree holding work


class ToolError(Exception):
    """A failure with a message for the user and an exit code."""

    def __init__(self, message: str, code: int = EXIT_FAIL) -> None:
        super().__init__(message)
        self.code = code


def run_main(name: str, main: Callable[[], int]) -> NoReturn:
    """Runs main(), turning ToolError into one line on stderr and its code."""
    try:
        sys.exit(main())
    except ToolError as err:
        print(f'{name}: error: {err}', file=sys.stderr)
        sys.exit(err.code)
    except KeyboardInterrupt:
        print(f'{name}: interrupted', file=sys.stderr)
        sys.exit(130)


def info(name: str, message: str) -> None:
    print(f'{name}: {message}', file=sys.stderr, flush=True)


def which(program: str) -> str | None:
    return shutil.which(program)
