# SPDX-License-Identifier: GPL-2.0
"""tools/mutants without a kernel: how it splits a patch into hunks and
classifies them, the notes that justify a survivor, its refusals."""

import json
import os
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from fixtures import Isolated, load_tool

TOOLS = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(TOOLS / 'lib'))
import kcidb


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

    def test_a_hunk_of_includes_only_is_not_mutated(self):
        # 0006's '#include <linux/sched/mm.h>' survived as a mutant: the
        # header came in through another one
        patch = Path(self.tmp.name) / '0002-nfs-a-scope.patch'
        patch.write_text(PATCH.split('diff --git', 1)[0] + """\
diff --git a/fs/nfs/direct.c b/fs/nfs/direct.c
index 1111111..2222222 100644
--- a/fs/nfs/direct.c
+++ b/fs/nfs/direct.c
@@ -41,6 +41,7 @@
 #include <linux/errno.h>
 #include <linux/sched.h>
+#include <linux/sched/mm.h>
 #include <linux/kernel.h>
@@ -60,3 +61,5 @@
 #include "internal.h"
+/* for the scope */
+# include "pnfs.h"
@@ -70,3 +73,4 @@ static void f(void)
 #include <linux/a.h>
+#include <linux/b.h>
+	a = 1;
@@ -80,3 +84,4 @@ static void g(void)
 }
+#include "tests/direct_kunit.c"
""")
        self.assertEqual([h.kind for h in self.tool.hunks_of(patch)],
                         ['include', 'include', 'code', 'test'])
        self.assertFalse(self.tool.is_include_only(['+']))

    def test_test_programs_are_not_mutated(self):
        # mutants: [2] found 0002's calls of its new locking selftests
        # surviving: taken back, they remove tests, not code under test
        for path in ('lib/locking-selftest.c', 'lib/test_reclaim_inversion.c',
                     'fs/nfsd/nfsd_commit_kunit.c', 'mm/tests/a.c'):
            self.assertTrue(self.tool.is_test_file(path), path)
        for path in ('lib/other.c', 'mm/test_x.c', 'kernel/locking/lockdep.c'):
            self.assertFalse(self.tool.is_test_file(path), path)
        patch = Path(self.tmp.name) / '0002-lockdep-a-fix.patch'
        patch.write_text(PATCH.split('diff --git', 1)[0] + """\
diff --git a/lib/locking-selftest.c b/lib/locking-selftest.c
index 1111111..2222222 100644
--- a/lib/locking-selftest.c
+++ b/lib/locking-selftest.c
@@ -2955,3 +2955,4 @@ void locking_selftest(void)
 	a();
+	DO_TESTCASE_1(b);
 	c();
diff --git a/lib/other.c b/lib/other.c
index 1111111..2222222 100644
--- a/lib/other.c
+++ b/lib/other.c
@@ -10,3 +10,4 @@ void other(void)
 	a();
+	b();
 	c();
""")
        self.assertEqual([(h.file, h.kind) for h in self.tool.hunks_of(patch)],
                         [('lib/other.c', 'code')])

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


class RunFileTest(Isolated):
    """run() with its kernel parts replaced: a worktree that is a git
    repository of the test's own, builds that succeed (no build directory
    lock: one process runs several times), suites that pass or fail as
    the test says."""

    def setUp(self):
        super().setUp()
        os.environ['RECLAIM_RESULTS'] = str(self.tmp / 'results')
        os.environ['RECLAIM_BUILD_DIR'] = str(self.tmp / 'build')
        os.environ['RECLAIM_CACHE'] = str(self.tmp / 'cache')
        self.tool = load_tool('tools/mutants', 'mutants_tool')
        self.results = self.tmp / 'results' / 'mutants'
        self.work = self.tmp / 'work'
        (self.work / 'mm').mkdir(parents=True)
        (self.work / 'mm' / 'vmscan.c').write_text('int a;\n')
        self.git('init', '-q')
        self.commit('the tree')
        patch = self.tmp / '0001-mm-a-change.patch'
        patch.write_text(PATCH)
        self.hunks = self.tool.hunks_of(patch)
        # three hunks of code: foo, baz (caught) and foo_trace (survives,
        # justified by the notes)
        code = self.hunks[1]
        for function in ('baz', 'foo_trace'):
            self.hunks.append(self.tool.Hunk(
                code.patch, code.file, code.line, function,
                code.text.replace('a = 2;', f'a = {function}();')))
        for h in self.hunks:
            if h.kind != 'code':
                h.outcome = h.kind
        self.notes = {patch.name: self.tool.justifications(patch)}
        self.mutated = []

    def git(self, *args):
        subprocess.run(['git', '-C', str(self.work), *args], check=True,
                       capture_output=True)

    def commit(self, message):
        self.git('add', '-A')
        self.git('-c', 'user.name=T', '-c', 'user.email=t@example.org',
                 'commit', '-q', '--allow-empty', '-m', message)

    def suite_passes(self, work, out, suite):
        # the unmutated suites pass; foo's and baz's mutants are caught;
        # after baz, Ctrl-C when the test says so
        hunk = self.current
        if hunk is None:
            return True
        if hunk.function == self.interrupt_at:
            raise KeyboardInterrupt
        return hunk.function == 'foo_trace'

    def take_back(self, work, hunk):
        self.current = hunk
        self.mutated.append(hunk.function)
        return True

    def run_tool(self, resume=False, interrupt_at=None, results=None):
        self.current = None
        self.interrupt_at = interrupt_at
        self.mutated = []
        t = self.tool
        with mock.patch.object(t, 'worktree', return_value=self.work), \
                mock.patch.object(t, 'build', return_value=True), \
                mock.patch.object(t, 'take_back', side_effect=self.take_back), \
                mock.patch.object(t, 'suite_passes', side_effect=self.suite_passes), \
                mock.patch.object(t.kunitpy, 'hold_build'), \
                mock.patch.object(t.kunitpy, 'list_tests',
                                  return_value=['vmscan_isolation.one']):
            return t.run(self.hunks, self.work, self.notes, 'p01', resume, results)

    def records(self, path):
        return [json.loads(line) for line in path.read_text().splitlines()]

    def test_each_run_keeps_a_file_and_each_outcome_is_written_when_decided(self):
        first = self.run_tool()
        self.assertEqual(self.mutated, ['foo', 'baz', 'foo_trace'])
        self.assertRegex(first.name, r'^mutants-p01-\d{8}T\d{6}Z\.jsonl$')
        self.assertEqual((self.results / 'latest.jsonl').resolve(), first.resolve())
        records = self.records(first)
        self.assertEqual(records[0]['record'], 'run')
        head = subprocess.run(['git', '-C', str(self.work), 'rev-parse', 'HEAD'],
                              capture_output=True, text=True).stdout.strip()
        self.assertEqual(records[0]['head'], head)
        self.assertEqual([(r['function'], r['outcome']) for r in records[1:-1]], [
            ('struct reclaim_state {', 'header'), ('foo_trace', 'comment'),
            ('bar', 'test'), ('foo', 'caught'), ('baz', 'caught'),
            ('foo_trace', 'justified')])
        self.assertEqual(records[-1]['record'], 'end')
        self.assertEqual(records[-1]['outcomes']['caught'], 2)
        # a second run keeps the first one's file
        for h in self.hunks:
            h.outcome = h.kind if h.kind != 'code' else ''
        second = self.run_tool()
        self.assertNotEqual(first, second)
        self.assertEqual(self.records(first), records)
        self.assertEqual((self.results / 'latest.jsonl').resolve(), second.resolve())

    def test_an_interrupted_run_keeps_what_it_decided_and_resume_goes_on(self):
        with self.assertRaises(KeyboardInterrupt):
            self.run_tool(interrupt_at='baz')
        cut = (self.results / 'latest.jsonl').resolve()
        records = self.records(cut)
        self.assertEqual([(r['function'], r['outcome']) for r in records
                          if r['record'] == 'hunk' and r['kind'] == 'code'],
                         [('foo', 'caught')])
        self.assertNotEqual(records[-1]['record'], 'end')
        # --resume mutates only what is left; the new file has every hunk
        for h in self.hunks:
            h.outcome = h.kind if h.kind != 'code' else ''
        path = self.run_tool(resume=True)
        self.assertEqual(self.mutated, ['baz', 'foo_trace'])
        records = self.records(path)
        self.assertEqual([(r['function'], r['outcome'], r['resumed_from'])
                          for r in records if r['record'] == 'hunk' and r['kind'] == 'code'],
                         [('foo', 'caught', cut.name), ('baz', 'caught', ''),
                          ('foo_trace', 'justified', '')])
        self.assertEqual(records[-1]['record'], 'end')
        self.assertEqual([h.outcome for h in self.hunks if h.kind == 'code'],
                         ['caught', 'caught', 'justified'])
        # all decided: a resumed run builds and boots nothing
        path = self.run_tool(resume=True)
        self.assertEqual(self.mutated, [])
        # another HEAD: everything again
        (self.work / 'mm' / 'vmscan.c').write_text('int b;\n')
        self.commit('another tree')
        self.run_tool(resume=True)
        self.assertEqual(self.mutated, ['foo', 'baz', 'foo_trace'])

    def kcidb_of(self, results):
        data = json.loads((results / 'kcidb.json').read_text())
        self.assertEqual(kcidb.problems(data) + kcidb.references(data), [])
        return data

    def test_a_run_writes_its_kcidb_with_the_counts_of_its_last_line(self):
        path = self.run_tool()
        data = self.kcidb_of(self.results)
        # caught 2 (passed), survived 0, the other 4 skipped
        self.assertEqual(kcidb.tally(data), (2, 0, 4))
        self.assertEqual([(t['misc']['function'], t['status']) for t in data['tests']], [
            ('struct reclaim_state {', 'SKIP'), ('foo', 'PASS'), ('foo_trace', 'SKIP'),
            ('bar', 'SKIP'), ('baz', 'PASS'), ('foo_trace', 'SKIP')])
        self.assertTrue(data['tests'][1]['path'].startswith('mutants.0001.mm_vmscan_c.foo.L'))
        self.assertEqual(data['tests'][1]['output_files'],
                         [{'name': path.name, 'url': path.as_uri()}])
        [build] = data['builds']
        self.assertTrue(build['valid'])
        self.assertTrue(build['id'].endswith(':mutants-p01'))
        # a survivor the notes do not explain fails
        self.notes = {}
        for h in self.hunks:
            h.outcome = h.kind if h.kind != 'code' else ''
        self.run_tool()
        data = self.kcidb_of(self.results)
        self.assertEqual(kcidb.tally(data), (2, 1, 3))
        self.assertEqual(data['tests'][-1]['status'], 'FAIL')
        self.assertIn('survived', data['tests'][-1]['comment'])

    def test_results_puts_the_run_in_a_directory_of_its_own(self):
        job = self.tmp / 'results' / 'mutants-1'
        path = self.run_tool(results=job)
        self.assertEqual(path.parent, job)
        self.assertEqual(kcidb.tally(self.kcidb_of(job)), (2, 0, 4))
        self.assertFalse((self.results / 'kcidb.json').exists())
        # nothing to mutate: nothing built, every hunk skipped
        self.hunks = [h for h in self.hunks if h.kind != 'code']
        self.run_tool(results=job)
        data = self.kcidb_of(job)
        self.assertNotIn('valid', data['builds'][0])
        self.assertEqual(kcidb.tally(data), (0, 0, 3))

    def test_names_of_the_patches_run(self):
        self.assertEqual(self.tool.label([1, 2, 3], 3), 'all')
        self.assertEqual(self.tool.label([8], 21), 'p08')
        self.assertEqual(self.tool.label(list(range(5, 22)), 21), 'p05-21')
        self.assertEqual(self.tool.label([3, 8, 9], 21), 'p03,08-09')


class RealSeriesTest(Isolated):

    def run_tool(self, *args):
        env = dict(os.environ, RECLAIM_RESULTS=str(self.tmp / 'results'),
                   RECLAIM_CACHE=str(self.tmp / 'cache'),
                   RECLAIM_BUILD_DIR=str(self.tmp / 'build'))
        return subprocess.run([str(TOOLS / 'mutants'), *args], text=True, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)

    def test_list_classifies_the_series_and_writes_nothing(self):
        proc = self.run_tool('--list')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        last = proc.stdout.strip().splitlines()[-1]
        self.assertRegex(last, r'^mutants: \d+ hunks of code to mutate, \d+ not mutated')
        self.assertFalse((self.tmp / 'results').exists(),
                         list((self.tmp / 'results').rglob('*')))

    def test_bad_arguments(self):
        for args in (['--patch', '0'], ['--patch', 'x'], ['--from', '99'],
                     ['--resume']):
            with self.subTest(args=args):
                proc = self.run_tool('--list', *args)
                self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == '__main__':
    unittest.main()
