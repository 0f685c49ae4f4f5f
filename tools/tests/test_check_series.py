# SPDX-License-Identifier: GPL-2.0
"""tools/check-series' arguments: --bisect-from must name a patch of the
series, and is refused before any slow check runs; its reading of the
reviewer notes below a patch's --- line."""

import importlib.machinery
import importlib.util
import tempfile
import unittest
from pathlib import Path

from fixtures import REPO, ScratchRepo


def load_check_series():
    loader = importlib.machinery.SourceFileLoader(
        'check_series', str(REPO / 'tools' / 'check-series'))
    spec = importlib.util.spec_from_loader('check_series', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Subject: [PATCH] mm/vmscan: change

Why, what, and how it was tested.
More.
More still.
{extra}
Signed-off-by: A <a@example.org>
---

Notes (kbranch):
    checkpatch: UNKNOWN_COMMIT_ID is expected: no history
    checkpatch: OPEN_ENDED_LINE and PARENTHESIS_ALIGNMENT are expected

 mm/vmscan.c | 1 +
"""


class NotesTest(unittest.TestCase):

    def setUp(self):
        self.cs = load_check_series()
        self.known = {'UNKNOWN_COMMIT_ID', 'OPEN_ENDED_LINE', 'PARENTHESIS_ALIGNMENT'}

    def test_justifications_come_from_the_notes(self):
        import kbranch
        notes = kbranch.patch_notes(PATCH.format(extra=''))
        types, problems = self.cs.justified_types(notes, self.known)
        self.assertEqual(types, self.known)
        self.assertEqual(problems, [])

    def test_unknown_type_and_prose_are_refused(self):
        types, problems = self.cs.justified_types(
            'checkpatch: NOT_A_TYPE reason\ncheckpatch: the reason first',
            self.known)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn('NOT_A_TYPE is not a checkpatch type', problems[0])
        self.assertIn('does not start with a checkpatch type name', problems[1])

    def test_a_justification_in_the_changelog_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = Path(tmp) / 'good.patch'
            good.write_text(PATCH.format(extra=''))
            self.assertEqual(self.cs.check_changelog(good), [])
            bad = Path(tmp) / 'bad.patch'
            bad.write_text(PATCH.format(extra='\ncheckpatch: UNKNOWN_COMMIT_ID why\n'))
            problems = self.cs.check_changelog(bad)
            self.assertEqual(len(problems), 1, problems)
            self.assertIn('below the --- line', problems[0])


class BisectFromTest(ScratchRepo):

    def test_out_of_range_is_refused(self):
        self.prepared()
        for bad in ('0', '2'):
            proc = self.tool('tools/check-series', '--bisect', '--bisect-from', bad)
            self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
            self.assertIn(f'--bisect-from {bad}: the series has 0 patches',
                          proc.stderr)
            self.assertNotIn('builds', proc.stdout)


if __name__ == '__main__':
    import unittest
    unittest.main()
