# SPDX-License-Identifier: GPL-2.0
"""ci/: how ci/test counts a step and sums the steps up, its exit codes, and
tools/run-suites never keeping the console of one boot as another suite's."""

import json
import sys
from unittest import mock

from fixtures import REPO, Isolated, ScratchRepo, load_tool

sys.path.insert(0, str(REPO / 'tools' / 'lib'))
import kunitpy


class CountTest(Isolated):

    def setUp(self):
        super().setUp()
        self.ci = load_tool('ci/test', 'ci_test')

    def test_count_lines_of_each_tool(self):
        for line, counts in (
                ('tools: 97 passed, 0 failed, 0 skipped\n', (97, 0, 0)),
                ('kunit: 3 passed, 2 failed, 1 skipped', (3, 2, 1)),
                ('check-series: 40 passed, 1 failed', (40, 1, 0)),
                ('e2e: 1 passed, 0 failed, 0 skipped', (1, 0, 0)),
                ('  12 passed, 0 failed, 0 skipped  ', (12, 0, 0))):
            with self.subTest(line=line):
                self.assertEqual(self.ci.step_counts(['noise\n', line], 0), counts)

    def test_other_lines_do_not_count(self):
        for line in ('FAILED alpha: 3 passed, 1 failed',
                     'kunit: 3 passed, 1 failed, 0 skipped (roughly)',
                     'a b: 3 passed, 1 failed',
                     '3 passed, 1 failed, 0 skipped, 2 flaky'):
            with self.subTest(line=line):
                self.assertEqual(self.ci.step_counts([line], 0), (1, 0, 0))

    def test_the_last_count_line_wins(self):
        self.assertEqual(self.ci.step_counts(
            ['kunit: 1 passed, 0 failed, 0 skipped',
             'kunit: 5 passed, 1 failed, 2 skipped'], 1), (5, 1, 2))

    def test_a_step_without_a_count_is_one_check(self):
        self.assertEqual(self.ci.step_counts(['setup: all packages present'], 0),
                         (1, 0, 0))
        self.assertEqual(self.ci.step_counts([], 3), (0, 1, 0))

    def test_a_failing_step_counts_a_failure(self):
        # e.g. a crash after the count line, or a count that missed one
        self.assertEqual(self.ci.step_counts(
            ['tools: 97 passed, 0 failed, 0 skipped'], 1), (97, 1, 0))
        self.assertEqual(self.ci.step_counts(
            ['kunit: 3 passed, 2 failed, 0 skipped'], 1), (3, 2, 0))

    def test_totals(self):
        rows = [('setup', (1, 0, 0), 0, 1.0),
                ('tools', (97, 0, 2), 0, 20.0),
                ('kunit default', (300, 1, 4), 1, 900.0)]
        self.assertEqual(self.ci.totals(rows), (398, 1, 6))
        self.assertEqual(self.ci.totals([]), (0, 0, 0))

    def test_bad_arguments_exit_2_before_any_step(self):
        with mock.patch.object(self.ci, 'step',
                               side_effect=AssertionError('a step ran')), \
                mock.patch.object(sys, 'argv', ['ci/test', '--no-such-option']), \
                mock.patch('sys.stderr'):
            with self.assertRaises(SystemExit) as ctx:
                self.ci.main()
        self.assertEqual(ctx.exception.code, 2)

    def steps_of(self, argv):
        """ci/test @argv with every step passing: [(name, command)] in the
        order they ran."""
        ran = []

        def step(name, cmd):
            ran.append((name, cmd))
            return (1, 0, 0), 0, 0.0

        with mock.patch.object(self.ci, 'step', side_effect=step), \
                mock.patch.object(sys, 'argv', argv), \
                mock.patch('sys.stdout'):
            self.assertEqual(self.ci.main(), 0)
        return ran

    def test_the_steps_in_order(self):
        ran = self.steps_of(['ci/test'])
        self.assertEqual([name for name, _ in ran],
                         ['setup', 'prepare', 'tools', 'lint', 'kunit default',
                          'e2e build', 'check-series', 'check-series w1',
                          'e2e short', 'e2e stall', 'e2e cycle', 'e2e fs', 'e2e pnfs'])
        cmds = dict(ran)
        self.assertEqual(cmds['lint'], ['tools/lint'])
        self.assertEqual(cmds['kunit default'], ['tools/run-suites'])
        self.assertEqual(cmds['check-series'], ['tools/check-series'])
        self.assertEqual(cmds['check-series w1'], ['tools/check-series', 'w1'])
        self.assertEqual(cmds['e2e build'], ['tools/e2e', 'build', '--no-setup'])
        self.assertEqual(cmds['e2e cycle'], ['tools/e2e', 'run', '--scenario', 'cycle',
                                             '--policy', 'bounded', '--runs', '1'])
        self.assertEqual(cmds['e2e fs'], ['tools/e2e', 'run', '--scenario', 'fs', '--short'])
        self.assertEqual(cmds['e2e pnfs'], ['tools/e2e', 'run', '--scenario', 'pnfs', '--short'])

    def test_save_work_prepares_with_force_and_ci_run_gives_it(self):
        for argv, want in ((['ci/test'], ['tools/prepare']),
                           (['ci/test', '--save-work'],
                            ['tools/prepare', '--force'])):
            self.assertEqual(dict(self.steps_of(argv))['prepare'], want)
        ci_run = (kunitpy.paths.REPO / '.ci' / 'run').read_text()
        self.assertIn('\nexec ci/test --save-work\n', ci_run)

    def test_full_adds_the_variants_postings_bisect_and_mutants(self):
        cmds = dict(self.steps_of(['ci/test', '--full']))
        self.assertEqual(cmds['postings'], ['tools/check-series', 'postings'])
        self.assertEqual(cmds['bisect'], ['tools/check-series', 'bisect'])
        self.assertEqual(cmds['mutants'], ['tools/mutants'])
        self.assertIn(['tools/run-suites', '--variant', 'no-lockdep'], cmds.values())
        self.assertEqual(list(cmds)[-1], 'mutants')

    def run_failing(self, failing, *argv):
        """ci/test's steps in order, @failing exiting 1; (steps run, output)."""
        import contextlib
        import io
        ran = []

        def step(name, cmd):
            ran.append(name)
            return ((0, 1, 0), 1, 0.0) if name in failing else ((1, 0, 0), 0, 0.0)

        out = io.StringIO()
        with mock.patch.object(self.ci, 'step', side_effect=step), \
                mock.patch.object(sys, 'argv', ['ci/test', *argv]), \
                contextlib.redirect_stdout(out):
            self.assertEqual(self.ci.main(), 1)
        return ran, out.getvalue()

    def test_a_failed_prepare_still_runs_the_tools_tests_and_lint(self):
        ran, out = self.run_failing({'prepare'})
        self.assertEqual(ran, ['setup', 'prepare', 'tools', 'lint'])
        for name in ('kunit default', 'check-series', 'check-series w1',
                     'e2e build', 'e2e short', 'e2e stall', 'e2e cycle', 'e2e fs'):
            self.assertIn(f'{name:<16} not run: prepare failed', out)
        self.assertIn('==== kunit default: not run (prepare failed)', out)
        self.assertEqual(out.strip().splitlines()[-1],
                         '3 passed, 1 failed, 0 skipped')

    def test_a_failed_setup_runs_nothing_else(self):
        ran, out = self.run_failing({'setup'})
        self.assertEqual(ran, ['setup'])
        self.assertIn('tools            not run: setup failed', out)

    def test_a_failed_e2e_build_skips_only_the_boots(self):
        ran, out = self.run_failing({'e2e build'}, '--full')
        self.assertNotIn('e2e short', ran)
        self.assertNotIn('e2e stall', ran)
        self.assertNotIn('e2e cycle', ran)
        self.assertNotIn('e2e fs', ran)
        self.assertIn('e2e fs           not run: e2e build failed', out)
        self.assertIn('e2e stall        not run: e2e build failed', out)
        self.assertIn('e2e cycle        not run: e2e build failed', out)
        self.assertIn('e2e pnfs         not run: e2e build failed', out)
        # w1 recompiles in the guest's build directory
        self.assertIn('check-series w1  not run: e2e build failed', out)
        self.assertEqual(ran[-3:], ['postings', 'bisect', 'mutants'])

    def test_a_failed_check_stops_nothing(self):
        ran, _ = self.run_failing({'tools', 'kunit default'})
        self.assertEqual(len(ran), 13)

    def test_full_refuses_a_variant_named_as_a_tools_directory(self):
        import contextlib
        import io
        err = io.StringIO()
        with mock.patch.object(self.ci, 'step',
                               side_effect=AssertionError('a step ran')), \
                mock.patch.object(kunitpy.paths, 'REPO', self.tmp), \
                mock.patch.object(sys, 'argv', ['ci/test', '--full']), \
                contextlib.redirect_stderr(err):
            (self.tmp / 'kunit' / 'variants').mkdir(parents=True)
            (self.tmp / 'kunit' / 'variants' / 'e2e.config').write_text('')
            self.assertEqual(self.ci.main(), 2)
        self.assertIn("ci/test: error: kunit/variants/e2e.config: the name "
                      "'e2e' is taken", err.getvalue())


class SummaryTest(Isolated):

    def test_summary_json_is_as_before(self):
        # the keys and layout of tools/run-suites' summary.json, which other
        # tools read: as written before the records became dataclasses
        rs = load_tool('tools/run-suites', 'run_suites')
        failed = kunitpy.Counts(2, 1, 0, ['alpha.two: FAIL'])
        runs = [rs.SuiteRun('alpha', failed, 'kernel report in the console'),
                rs.SuiteRun('beta.1', kunitpy.Counts(skipped=1), '')]
        self.assertEqual(rs.summary_json(runs), """{
  "alpha": {
    "passed": 2,
    "failed": 1,
    "skipped": 0,
    "note": "kernel report in the console",
    "failures": [
      "alpha.two: FAIL"
    ]
  },
  "beta.1": {
    "passed": 0,
    "failed": 0,
    "skipped": 1,
    "note": "",
    "failures": []
  }
}
""")


# A kunit.py that boots alpha, and dies before booting delta (as when QEMU
# cannot start): delta's boot writes no console.
KUNIT_PY = r'''#!/usr/bin/env python3
import json, os, sys
args = sys.argv[1:]
opts = dict(a[2:].split('=', 1) for a in args if a.startswith('--') and '=' in a)
words = [a for a in args if not a.startswith('--')]
build = opts.get('build_dir', '.')
if words[0] == 'build':
    sys.exit(0)
if words[0] == 'parse':
    sys.stdout.write(open(words[1]).read())
    sys.exit(0)
if '--list_tests' in args:
    print('alpha.one\ndelta.one')
    sys.exit(0)
if words[-1] == 'delta':
    print('qemu-system-x86_64: cannot start')
    sys.exit(1)
open(os.path.join(build, 'test.log'), 'w').write('KTAP version 1\n1..1\nok 1 alpha\n')
json.dump({'name': 'KUnit Test Group', 'test_cases': [], 'sub_groups': [
    {'name': 'alpha', 'sub_groups': [],
     'test_cases': [{'name': 'one', 'status': 'PASS'}]}]}, open(opts['json'], 'w'))
'''


class StaleConsoleTest(ScratchRepo):

    def test_a_boot_that_never_started_keeps_no_console(self):
        self.prepared()
        kunit = self.tree / 'tools' / 'testing' / 'kunit' / 'kunit.py'
        kunit.parent.mkdir(parents=True)
        kunit.write_text(KUNIT_PY)
        with open(self.tree / '.git' / 'info' / 'exclude', 'a') as f:
            f.write('/tools/testing/kunit/\n')
        results = self.tmp / 'results' / 'default'
        proc = self.tool('tools/run-suites')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 1 passed, 1 failed, 0 skipped')
        self.assertIn('ok 1 alpha', (results / 'alpha.log').read_text())
        # not alpha's console under delta's name
        self.assertFalse((results / 'delta.log').exists())
        self.assertFalse((results / 'delta.ktap').exists())
        self.assertIn(f'FAILED delta: kunit.py exit 1 before the kernel wrote a '
                      f'console (see {results / "delta.txt"})', proc.stdout)
        self.assertIn('cannot start', (results / 'delta.txt').read_text())
        summary = json.loads((results / 'summary.json').read_text())
        self.assertEqual(summary['delta']['note'], 'no console')


if __name__ == '__main__':
    import unittest
    unittest.main()
