# SPDX-License-Identifier: GPL-2.0
"""tools/mutants without a kernel: how it splits a patch into hunks and
classifies them, the notes that justify a survivor, its refusals."""

import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import load_tool

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS / 'lib'))


PATCH = """\
From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Subject: [PATCH] mm: a change

A changelog.

Signed-off-by: A <a@example.org>
---

Notes (kbranch):
    mutant: foo_trace the tracepoint's text only
    checkpatch: LONG_LINE one line

 mm/vmscan.c | 4 ++++
 1 file changed

diff --git a/include/linux/swap.h b/include/linux/swap.h
index 1111111..2222222 100644
--- a/include/linux/swap.h
+++ b/include/linux/swap.h
@@ -1,3 +1,4 @@ struct reclaim_state {
 a
+b
 c
diff --git a/mm/vmscan.c b/mm/vmscan.c
index 1111111..2222222 100644
--- a/mm/vmscan.c
+++ b/mm/vmscan.c
@@ -10,6 +10,7 @@ static int foo(struct lruvec *lruvec)
 	int a;
 
 	a = 1;
+	a = 2;
 	return a;
 }
 
@@ -40,3 +41,4 @@ static void foo_trace(void)
 	x();
+	/* a comment */
 	y();
@@ -90,3 +92,6 @@ void bar(void)
 }
+#ifdef CONFIG_VMSCAN_ISOLATION_KUNIT_TEST
+#include "tests/vmscan_isolation_kunit.c"
+#endif
diff --git a/mm/tests/vmscan_isolation_kunit.c b/mm/tests/vmscan_isolation_kunit.c
new file mode 100644
index 0000000..3333333
--- /dev/null
+++ b/mm/tests/vmscan_isolation_kunit.c
@@ -0,0 +1,2 @@
+// SPDX-License-Identifier: GPL-2.0
+int x;
-- 
2.39.5
"""


class HunkTest(unittest.TestCase):

    def setUp(self):
        self.tool = load_tool('tools/mutants', 'mutants_tool')
        self.tmp = tempfile.TemporaryDirectory()
        self.patch = Path(self.tmp.name) / '0001-mm-a-change.patch'
        self.patch.write_text(PATCH)

    def tearDown(self):
        self.tmp.cleanup()

    def test_hunks_are_classified(self):
        hunks = self.tool.hunks_of(self.patch)
        self.assertEqual([(h.file, h.kind, h.function, h.line) for h in hunks], [
            ('include/linux/swap.h', 'header', 'struct reclaim_state {', 1),
            ('mm/vmscan.c', 'code', 'foo', 10),
            ('mm/vmscan.c', 'comment', 'foo_trace', 41),
            ('mm/vmscan.c', 'test', 'bar', 92),
        ])
        # each hunk is a patch of its own: the file's header and the hunk
        code = hunks[1].text
        self.assertTrue(code.startswith('diff --git a/mm/vmscan.c b/mm/vmscan.c\n'))
        self.assertIn('+++ b/mm/vmscan.c\n@@ -10,6 +10,7 @@', code)
        self.assertNotIn('foo_trace', code)

    def test_a_hunk_comes_out_with_git_apply(self):
        hunk = self.tool.hunks_of(self.patch)[1]
        with tempfile.TemporaryDirectory() as work:
            (Path(work) / 'mm').mkdir()
            lines = [f'l{i}\n' for i in range(1, 10)] + \
                ['\tint a;\n', '\n', '\ta = 1;\n', '\ta = 2;\n', '\treturn a;\n', '}\n', '\n']
            (Path(work) / 'mm/vmscan.c').write_text(''.join(lines))
            subprocess.run(['git', 'init', '-q', work], check=True)
            self.assertTrue(self.tool.take_back(work, hunk))
            self.assertNotIn('a = 2;', (Path(work) / 'mm/vmscan.c').read_text())
            self.assertFalse(self.tool.take_back(work, hunk))

    def test_notes_justify_by_function(self):
        self.assertEqual(self.tool.justifications(self.patch),
                         {'foo_trace': "the tracepoint's text only"})

    def test_suites_follow_the_path(self):
        available = ['vmscan_isolation', 'nfs_commit_wait', 'lockdep_reclaim_fs']
        self.assertEqual(self.tool.suites_for('fs/nfs/write.c', available),
                         ['nfs_commit_wait'])
        self.assertEqual(self.tool.suites_for('mm/vmscan.c', available),
                         ['vmscan_isolation', 'lockdep_reclaim_fs'])
        self.assertEqual(self.tool.suites_for('lib/other.c', available), available)


class RealSeriesTest(unittest.TestCase):

    def run_tool(self, *args):
        return subprocess.run([str(TOOLS / 'mutants'), *args], text=True,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def test_list_classifies_the_series(self):
        proc = self.run_tool('--list')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        last = proc.stdout.strip().splitlines()[-1]
        self.assertRegex(last, r'^mutants: \d+ hunks of code to mutate, \d+ not mutated')

    def test_bad_arguments(self):
        for args in (['--patch', '0'], ['--patch', 'x'], ['--from', '99']):
            with self.subTest(args=args):
                proc = self.run_tool('--list', *args)
                self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == '__main__':
    unittest.main()
