#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Runs the tools' own unit tests; last line `tools: N passed, N failed, N skipped`."""

import sys
import unittest
from pathlib import Path

HERE = Path(__file__).resolve().parent


def main():
    suite = unittest.defaultTestLoader.discover(str(HERE), pattern='test_*.py',
                                                top_level_dir=str(HERE))
    result = unittest.TextTestRunner(verbosity=2, stream=sys.stdout).run(suite)
    failed = len(result.failures) + len(result.errors) + \
        len(result.unexpectedSuccesses)
    skipped = len(result.skipped)
    passed = result.testsRun - failed - skipped
    print(f'tools: {passed} passed, {failed} failed, {skipped} skipped')
    return 1 if failed or result.testsRun == 0 else 0


if __name__ == '__main__':
    sys.exit(main())
