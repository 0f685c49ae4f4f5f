# SPDX-License-Identifier: GPL-2.0
"""tools/lint on a scratch copy of the repository's Python: clean as it is;
a seeded flake8 finding and a seeded type error are named, file by file,
in the extensionless tools and in programs it finds by their first line;
functions of tools/lib must be annotated, the tests' need not; without
flake8 or mypy it exits 3."""

import os
import shutil
import subprocess
import sys

from fixtures import REPO, Isolated


class LintTest(Isolated):

    def setUp(self):
        super().setUp()
        self.repo = self.tmp / 'repo'
        for part in ('tools', 'ci', 'e2e'):
            shutil.copytree(REPO / part, self.repo / part,
                            ignore=shutil.ignore_patterns('__pycache__'))
        shutil.copy(REPO / 'setup.cfg', self.repo / 'setup.cfg')

    def lint(self, env=None):
        proc = subprocess.run([sys.executable, str(self.repo / 'tools' / 'lint')],
                              cwd=self.tmp, env={**os.environ, **(env or {})},
                              text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        return proc, proc.stdout.splitlines()

    def append(self, path, text):
        with open(self.repo / path, 'a') as f:
            f.write(text)

    def test_clean_then_seeded(self):
        proc, lines = self.lint()
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        total = int(lines[-1].split()[1])
        self.assertEqual(lines, [f'lint: {total} passed, 0 failed'])
        # the extensionless tools are among them
        self.assertGreaterEqual(total, 20)

        # flake8: an unused import in the library
        self.append('tools/lib/hostpkgs.py', 'import glob\n')
        # mypy: a type error in an extensionless tool (module "kunit", as
        # tools/lib/kunitpy.py is not)
        self.append('tools/kunit', '\n\ndef seeded() -> int:\n    return "1"\n')
        # a new tool, found by its first line; a shell script is not Python
        (self.repo / 'tools' / 'new-tool').write_text(
            '#!/usr/bin/env python3\n"""A new tool."""\n\n\n'
            'def main() -> int:\n    return main() + ""\n')
        (self.repo / 'tools' / 'new-script').write_text('#!/bin/sh\nimport os,sys\n')
        # a function of tools/lib needs annotations; a test's does not
        self.append('tools/lib/kunitpy.py', '\n\ndef bare(x):\n    return x\n')
        self.append('tools/tests/test_series.py', '\n\ndef bare(x):\n    return x\n')

        proc, lines = self.lint()
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        out = proc.stdout
        self.assertRegex(out, r"(?m)^tools/lib/hostpkgs\.py:\d+:1: F401 'glob' imported "
                              r"but unused$")
        self.assertRegex(out, r'(?m)^tools/kunit:\d+: error: Incompatible return '
                              r'value type \(got "str", expected "int"\)')
        self.assertRegex(out, r'(?m)^tools/new-tool:6: error: Unsupported operand '
                              r'types for \+')
        self.assertRegex(out, r'(?m)^tools/lib/kunitpy\.py:\d+: error: Function is '
                              r'missing a type annotation')
        self.assertNotIn('new-script', out)
        self.assertNotIn('test_series.py', out)
        self.assertEqual([line for line in lines if line.startswith('FAIL')],
                         ['FAIL tools/kunit', 'FAIL tools/lib/hostpkgs.py',
                          'FAIL tools/lib/kunitpy.py', 'FAIL tools/new-tool'])
        self.assertEqual(lines[-1], f'lint: {total + 1 - 4} passed, 4 failed')

    def test_missing_checkers_exit_3(self):
        bindir = self.tmp / 'bin'
        bindir.mkdir()
        os.symlink(sys.executable, bindir / 'python3')
        proc, _ = self.lint(env={'PATH': str(bindir)})
        self.assertEqual(proc.returncode, 3, proc.stdout + proc.stderr)
        self.assertEqual(proc.stderr.strip(),
                         'lint: error: flake8 and mypy are not installed (Debian '
                         'packages flake8 and mypy; tools/setup installs them)')
        self.assertEqual(proc.stdout, '')


if __name__ == '__main__':
    import unittest
    unittest.main()
