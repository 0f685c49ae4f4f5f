# SPDX-License-Identifier: GPL-2.0
"""The tools' own documentation against what they do (review F15): every
tool that holds a lock, and so may refuse with exit 4, says so among its
exit codes; ci/test's docstring counts every kind of step that prints a
count line."""

import ast
import re
import sys
import unittest
from unittest import mock

from fixtures import REPO, load_tool

# what makes a tool refuse with exit 4: a lock it holds, or a refusal of its own
LOCKS = ('hold_build(', 'build_lock(', 'lock_guest(', 'hold_tree(',
         'tree_lock(', 'EXIT_REFUSED')


def docstring(path):
    return ast.get_docstring(ast.parse(path.read_text())) or ''


def exit_codes(doc):
    """The text of a docstring from its `Exit codes:` on, one line."""
    m = re.search(r'Exit codes?:(.*)', doc, re.S)
    return ' '.join(m.group(1).split()) if m else ''


class ExitCodesTest(unittest.TestCase):

    def test_every_tool_that_may_refuse_documents_exit_4(self):
        tools = [p for p in sorted((REPO / 'tools').iterdir())
                 if p.is_file() and p.read_text(errors='replace')
                 .startswith('#!/usr/bin/env python3')]
        self.assertIn(REPO / 'tools' / 'e2e', tools)
        refusing = [p for p in tools
                    if any(lock in p.read_text() for lock in LOCKS)]
        for name in ('run-suites', 'e2e', 'kunit', 'check-series', 'mutants'):
            self.assertIn(REPO / 'tools' / name, refusing)
        for path in refusing:
            with self.subTest(tool=path.name):
                codes = exit_codes(docstring(path))
                self.assertTrue(codes, f'{path.name}: no "Exit codes:" in its docstring')
                self.assertRegex(codes, r'; 4 ', f'{path.name}: {codes}')


# the words ci/test's docstring counts each kind of step's count line with
COUNTED = {'tools': "the tools' tests", 'lint': 'the files linted',
           'kunit': 'the KUnit test cases', 'check-series': 'the series checks',
           'e2e': 'the end-to-end checks'}


class CiDocstringTest(unittest.TestCase):

    def test_the_total_counts_every_step_with_a_count_line(self):
        ci = load_tool('ci/test', 'ci_test')
        ran = []

        def step(name, cmd):
            ran.append((name, cmd))
            return (1, 0, 0), 0, 0.0

        with mock.patch.object(ci, 'step', side_effect=step), \
                mock.patch.object(sys, 'argv', ['ci/test']), \
                mock.patch('sys.stdout'):
            self.assertEqual(ci.main(), 0)
        # the steps whose tool ends with a count line: not setup, prepare
        # or e2e build, which count as one check each
        kinds = {name.split()[0] for name, cmd in ran
                 if name not in ('setup', 'prepare', 'e2e build')}
        self.assertEqual(kinds, set(COUNTED))
        m = re.search(r'counted over (.*?);', ci.__doc__, re.S)
        assert m is not None
        clause = ' '.join(m.group(1).split())
        for kind in sorted(kinds):
            with self.subTest(kind=kind):
                self.assertIn(COUNTED[kind], clause)


if __name__ == '__main__':
    unittest.main()
