# SPDX-License-Identifier: GPL-2.0
"""tools/run-suites and tools/kunit against a fake kunit.py: one build for all
suites, suites from --list_tests, crashes and unreadable results counted as
failures, unknown names and missing pieces refused clearly."""

import json
import os
import shutil
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import ScratchRepo, load_tool

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lib'))
import cli
import kcidb
import kunitpy
import paths


# fake_kunit.py's suites
FAKE_SUITES = ('alpha', 'beta', 'gamma', 'delta', 'epsilon', 'zeta')


class RunnerTest(ScratchRepo):

    def setUp(self):
        super().setUp()
        self.prepared()
        self.kunit_dir = self.install_fake_kunit()
        # what a --suite glob may name before the build
        for suite in FAKE_SUITES:
            (self.repo / 'kunit' / 'suites' / f'{suite}.config').write_text(
                f'# {suite}: a suite of fake_kunit.py\n')
        self.build = self.tmp / 'build' / 'default'
        self.results = self.tmp / 'results' / 'default'

    def calls(self):
        return (self.build / 'calls').read_text().splitlines()

    def test_every_suite_runs_alone_after_one_build(self):
        proc = self.tool('tools/run-suites')
        self.assertEqual(proc.returncode, 1, proc.stderr)
        calls = self.calls()
        self.assertEqual(sum(c.startswith('build ') for c in calls), 1)
        execs = [c.split()[-1] for c in calls
                 if c.startswith('exec ') and '--list_tests' not in c]
        self.assertEqual(execs, ['alpha', 'beta', 'gamma', 'delta'])
        self.assertTrue(all('--arch=x86_64' in c for c in calls
                            if c.startswith(('build', 'exec'))))
        # delta's skip is declared nowhere: a failure
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 3 passed, 3 failed, 0 skipped')
        summary = json.loads((self.results / 'summary.json').read_text())
        self.assertEqual(summary['alpha']['passed'], 3)
        self.assertEqual(summary['beta']['note'],
                         'crashed or incomplete, kernel report in the console')
        self.assertEqual(summary['gamma']['note'], 'unparseable results')
        self.assertEqual((summary['delta']['failed'], summary['delta']['skipped']),
                         (1, 0))
        # the crashed suite's console is kept, and KTAP is extracted
        self.assertIn('Kernel panic', (self.results / 'beta.log').read_text())
        self.assertIn('ok 1 alpha', (self.results / 'alpha.ktap').read_text())
        self.assertTrue((self.results / 'alpha.json').is_file())

    def skips(self, text, variant='default'):
        (self.repo / 'kunit' / 'variants' / f'{variant}.skips').write_text(text)

    def test_a_suite_whose_cases_all_skip_fails_unless_declared(self):
        # delta's only case skips: nothing checked, and nothing says why
        self.skips('')
        proc = self.tool('tools/run-suites', '--suite', 'delta')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 0 passed, 1 failed, 0 skipped')
        self.assertIn('FAILED delta: case delta.one skipped (needs CONFIG_DELTA), '
                      'and kunit/variants/default.skips does not declare it',
                      proc.stdout)
        summary = json.loads((self.results / 'summary.json').read_text())
        self.assertEqual(summary['delta']['note'], 'undeclared skip')
        # declared for this configuration, with the reason: it passes
        self.skips('# a comment\n\ndelta.one: needs CONFIG_DELTA, off here\n')
        proc = self.tool('tools/run-suites', '--suite', 'delta')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 0 passed, 0 failed, 1 skipped')
        # a glob declares it too
        self.skips('del*.o?e: needs CONFIG_DELTA\n')
        proc = self.tool('tools/run-suites', '--suite', 'delta')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_skips_are_declared_per_configuration(self):
        # declared for the default configuration, not for the variant
        self.skips('delta.one: needs CONFIG_DELTA\n')
        (self.repo / 'kunit' / 'variants' / 'probe.config').write_text('CONFIG_FOO=y\n')
        proc = self.tool('tools/run-suites', '--variant', 'probe', '--suite', 'delta')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn('FAILED delta: case delta.one skipped (needs CONFIG_DELTA), '
                      'and kunit/variants/probe.skips does not declare it',
                      proc.stdout)
        self.skips('delta.one: CONFIG_DELTA is off in probe too\n', 'probe')
        proc = self.tool('tools/run-suites', '--variant', 'probe', '--suite', 'delta')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_a_declared_skip_that_did_not_happen_is_noted(self):
        self.skips('alpha.one: was off once\nalpha.two.*: so were these\n')
        proc = self.tool('tools/run-suites', '--suite', 'alpha')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        summary = json.loads((self.results / 'summary.json').read_text())
        self.assertEqual(summary['alpha']['note'], 'declared skip did not happen: '
                         'alpha.one, alpha.two.*')

    def test_a_bad_skips_file_is_refused_before_the_build(self):
        for line in ('delta.one', 'delta.one:', 'delta.one needs CONFIG_DELTA',
                     'delta: needs CONFIG_DELTA'):
            with self.subTest(line=line):
                self.skips(f'# fine\n{line}\n')
                proc = self.tool('tools/run-suites')
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn('kunit/variants/default.skips:2: expected '
                              '"<suite>.<case>: <why it skips in the default '
                              'configuration>"', proc.stderr)
        self.assertFalse((self.build / 'calls').exists())

    def test_the_default_configuration_declares_its_two_skips(self):
        # README: `kunit: 249 passed, 0 failed, 2 skipped`, the
        # CGROUP_WRITEBACK case and the PREEMPT_RT one; every variant's
        # file reads too
        rs = load_tool('tools/run-suites', 'run_suites')
        self.assertEqual([e.pattern for e in rs.expected_skips('default')],
                         ['vmscan_isolation.cgroup_reclaim_with_writeback_'
                          'throttling_is_throttled',
                          'lockdep_kunit.lock_held_across_bh_section_is_'
                          'ordered_before_the_bh_lock'])
        for variant in kunitpy.variants():
            with self.subTest(variant=variant):
                rs.expected_skips(variant)
        # as a real vmscan_isolation KTAP line gives the reason
        ktap = ('    ok 6 cgroup_reclaim_with_writeback_throttling_is_throttled '
                '# SKIP needs a kernel with CONFIG_CGROUP_WRITEBACK and cgroup '
                'v2 memory\n    ok 7 check_under_limit_wakes_isolated_waiters\n')
        self.assertEqual(rs.skip_reasons(ktap), {
            'cgroup_reclaim_with_writeback_throttling_is_throttled':
            'needs a kernel with CONFIG_CGROUP_WRITEBACK and cgroup v2 memory'})

    def test_every_boot_panics_on_an_oops(self):
        self.tool('tools/run-suites', '--suite', 'alpha')
        execs = [c for c in self.calls() if c.startswith('exec ')]
        self.assertTrue(execs)
        for c in execs:
            self.assertIn('--kernel_args=oops=panic --kernel_args=panic=-1', c)

    def test_an_unannounced_report_fails_a_passing_suite(self):
        console = self.tmp / 'console'
        clean = (DATA / 'kunit-clean.log').read_text()
        env = {'FAKE_KUNIT_CONSOLE': str(console)}
        console.write_text(clean)
        proc = self.tool('tools/run-suites', '--suite', 'epsilon', env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 1 passed, 0 failed, 0 skipped')
        console.write_text(clean.replace('ok 1 one_shared_limit_is_reported',
                                         WARNING + 'ok 1 one_shared_limit_is_reported', 1))
        proc = self.tool('tools/run-suites', '--suite', 'epsilon', env=env)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 1 passed, 1 failed, 0 skipped')
        self.assertIn("epsilon: 2 kernel report line(s) no case announced, first: "
                      "'[    3.141592] WARNING: CPU: 1 PID: 77 at mm/vmscan.c:4907",
                      proc.stdout)
        summary = json.loads((self.results / 'summary.json').read_text())
        self.assertEqual(summary['epsilon']['note'], 'kernel report in the console')

    def test_suite_filter(self):
        proc = self.tool('tools/run-suites', '--suite', 'al*')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 3 passed, 0 failed, 0 skipped')

    def test_repeat_boots_each_suite_again_after_one_build(self):
        proc = self.tool('tools/run-suites', '--suite', 'alpha', '--repeat', '3')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        calls = self.calls()
        self.assertEqual(sum(c.startswith('build ') for c in calls), 1)
        self.assertEqual(sum(c.startswith('exec ') and c.endswith(' alpha')
                             for c in calls), 3)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 9 passed, 0 failed, 0 skipped')
        for run in (1, 2, 3):
            self.assertTrue((self.results / f'alpha.{run}.json').is_file())
        proc = self.tool('tools/run-suites', '--repeat', '0')
        self.assertEqual(proc.returncode, 2)
        self.assertIn('--repeat must be positive', proc.stderr)

    def test_unknown_suite_name_is_refused_before_the_build(self):
        # review F14: a typo was refused only after the build
        proc = self.tool('tools/run-suites', '--suite', 'alpha', '--suite',
                         'no_such_suite*')
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('no suite of kunit/suites/*.config or of the series '
                      'matches no_such_suite*; known: alpha, beta, delta, '
                      'epsilon, fs_reclaim_map, gamma, lockdep_kunit, '
                      'lockdep_reclaim_fs, ',
                      proc.stderr)
        self.assertTrue(proc.stderr.strip().endswith('nothing was built'),
                        proc.stderr)
        self.assertFalse((self.build / 'calls').exists())
        self.assertFalse(self.build.exists())
        # a suite a patch of the series adds, not named by a fragment
        (self.patches / '0001-omega.patch').write_text(
            '+static struct kunit_suite omega_suite = {\n'
            '+\t.name = "omega",\n+\t.test_cases = omega_cases,\n+};\n')
        (self.patches / 'series').write_text('0001-omega.patch\n')
        rs = load_tool('tools/run-suites', 'run_suites')
        self.assertIn('omega', rs.KUNIT_SUITE_RE.findall(
            (self.patches / '0001-omega.patch').read_text()))
        # known, but not in the build: refused once it has the build's list
        proc = self.tool('tools/run-suites', '--suite', 'omega')
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('no suite matches omega; the default build has: '
                      'alpha, beta, gamma, delta', proc.stderr)
        self.assertTrue((self.build / 'calls').exists())

    def test_the_known_suites_are_the_series(self):
        # every suite of the series, vmscan_reclaim_fs too, which
        # lockdep_reclaim_fs.config builds
        rs = load_tool('tools/run-suites', 'run_suites')
        self.assertGreaterEqual(set(rs.known_suites()), {
            'fs_reclaim_map', 'lockdep_reclaim_fs', 'vmscan_reclaim_fs',
            'nfs_commit_lockdep', 'nfsd_commit_lockdep', 'nfs_commit_wait',
            'nfs_pnfs_commit', 'vmscan_isolation', 'vmscan_isolation_lockdep'})

    def test_an_earlier_runs_results_do_not_survive_an_early_stop(self):
        self.results.mkdir(parents=True)
        for name in ('kcidb.json', 'summary.json'):
            (self.results / name).write_text('{"an earlier run": 1}\n')
        proc = self.tool('tools/run-suites', env={'FAKE_KUNIT_LIST': 'empty'})
        self.assertNotEqual(proc.returncode, 0)
        for name in ('kcidb.json', 'summary.json'):
            self.assertFalse((self.results / name).exists(), name)

    def test_build_failure_fails_without_running(self):
        proc = self.tool('tools/run-suites', env={'FAKE_KUNIT_BUILD': 'fail'})
        self.assertEqual(proc.returncode, 1)
        self.assertFalse(any(c.startswith('exec') for c in self.calls()))
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 0 passed, 1 failed, 0 skipped')

    def test_variant_lines_are_added_over_the_kunitconfig(self):
        (self.repo / 'kunit' / 'variants' / 'probe.config').write_text(
            '# a comment\nCONFIG_FOO=y\n# CONFIG_BAR is not set\n')
        proc = self.tool('tools/run-suites', '--variant', 'probe', '--suite', 'alpha')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        calls = (self.tmp / 'build' / 'probe' / 'calls').read_text().splitlines()
        build = [c for c in calls if c.startswith('build ')][0]
        self.assertIn('--kunitconfig=' + str(self.repo / '.kunitconfig'), build)
        self.assertIn('--kconfig_add=CONFIG_FOO=y', build)
        self.assertIn('--kconfig_add=# CONFIG_BAR is not set', build)
        self.assertNotIn('a comment', build)
        self.assertTrue((self.tmp / 'results' / 'probe' / 'alpha.json').is_file())

    def kcidb_of(self, results=None):
        """The run's kcidb.json, checked as ci/test --merge checks it."""
        data = json.loads(((results or self.results) / 'kcidb.json').read_text())
        self.assertEqual(kcidb.problems(data) + kcidb.references(data), [])
        return data

    def test_the_run_as_kcidb_counts_as_its_last_line(self):
        proc = self.tool('tools/run-suites')
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 3 passed, 3 failed, 0 skipped')
        data = self.kcidb_of()
        self.assertEqual(kcidb.tally(data), (3, 3, 0))
        self.assertEqual({t['path']: t['status'] for t in data['tests']}, {
            'kunit.alpha.one': 'PASS', 'kunit.alpha.two.p1': 'PASS',
            'kunit.alpha.two.p2': 'PASS',
            'kunit.beta': 'ERROR',          # crashed, no results
            'kunit.gamma': 'ERROR',         # unreadable results
            'kunit.delta.one': 'FAIL'})     # a skip nothing declares
        [checkout], [build] = data['checkouts'], data['builds']
        self.assertEqual(checkout['git_commit_hash'], self.git('rev-parse', 'kbranch/base'))
        self.assertEqual(checkout['id'], 'reclaim:' + self.git('rev-parse', 'HEAD'))
        self.assertEqual(checkout['patchset_hash'], '')     # an empty series
        self.assertEqual((build['valid'], build['config_name'], build['architecture']),
                         (True, 'default', 'x86_64'))
        self.assertTrue(build['id'].startswith('reclaim:'))
        self.assertTrue(build['id'].endswith(':kunit-default'))
        alpha = [t for t in data['tests'] if t['path'] == 'kunit.alpha.one'][0]
        self.assertEqual(alpha['log_url'], (self.results / 'alpha.log').as_uri())
        self.assertEqual([f['name'] for f in alpha['output_files']],
                         ['alpha.log', 'alpha.ktap', 'alpha.json', 'alpha.txt'])
        beta = [t for t in data['tests'] if t['path'] == 'kunit.beta'][0]
        self.assertIn('kunit.py exit 1', beta['log_excerpt'])
        # kunit.py's JSON is kept as it is
        self.assertEqual(json.loads((self.results / 'alpha.json').read_text())['name'],
                         'KUnit Test Group')

    def test_kcidb_of_skips_reports_and_partial_runs(self):
        self.skips('delta.one: needs CONFIG_DELTA\n')
        console = self.tmp / 'console'
        console.write_text((DATA / 'kunit-clean.log').read_text().replace(
            'ok 1 one_shared_limit_is_reported',
            WARNING + 'ok 1 one_shared_limit_is_reported', 1))
        for suite, env, counts, statuses in (
                ('delta', {}, (0, 0, 1), {'kunit.delta.one': 'SKIP'}),
                ('epsilon', {'FAKE_KUNIT_CONSOLE': str(console)}, (1, 1, 0),
                 {'kunit.epsilon.one': 'PASS', 'kunit.epsilon': 'FAIL'}),
                ('zeta', {'FAKE_KUNIT_PARTIAL': '1'}, (1, 1, 0),
                 {'kunit.zeta.one': 'PASS', 'kunit.zeta.missing': 'ERROR'})):
            with self.subTest(suite=suite):
                proc = self.tool('tools/run-suites', '--suite', suite, env=env)
                self.assertEqual(proc.stdout.strip().splitlines()[-1],
                                 'kunit: {} passed, {} failed, {} skipped'.format(*counts))
                data = self.kcidb_of()
                self.assertEqual(kcidb.tally(data), counts)
                self.assertEqual({t['path']: t['status'] for t in data['tests']},
                                 statuses)

    def test_a_failed_build_is_a_build_that_is_not_valid(self):
        proc = self.tool('tools/run-suites', env={'FAKE_KUNIT_BUILD': 'fail'})
        self.assertEqual(proc.returncode, 1)
        data = self.kcidb_of()
        self.assertEqual((data['builds'][0]['valid'], data['tests']), (False, []))
        self.assertEqual(kcidb.tally(data), (0, 1, 0))

    def test_a_ci_job_names_its_files_by_their_urls(self):
        env = {'RECLAIM_RESULTS_URL': 'https://ci.example.org/-/jobs/7/artifacts/raw',
               'RECLAIM_RUN_ID': '4242', 'RECLAIM_KCIDB_ORIGIN': 'example_ci'}
        proc = self.tool('tools/run-suites', '--suite', 'alpha', '--results',
                         'results/kunit-default', env=env)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        data = self.kcidb_of(self.repo / 'results' / 'kunit-default')
        self.assertEqual(data['builds'][0]['id'], 'example_ci:4242:kunit-default')
        self.assertEqual(data['tests'][0]['log_url'], 'https://ci.example.org/-/jobs/7/'
                         'artifacts/raw/results/kunit-default/alpha.log')

    def test_unknown_variant(self):
        for tool in ('tools/run-suites', 'tools/kunit'):
            args = ['--variant', 'nope'] if tool == 'tools/run-suites' else \
                ['run', '--no-setup', '--variant', 'nope']
            proc = self.tool(tool, *args)
            self.assertEqual(proc.returncode, 2, tool)
            self.assertIn("unknown variant 'nope'", proc.stderr)

    def test_a_variant_named_as_the_tools_own_directories_is_refused(self):
        # $RECLAIM_BUILD_DIR/<name> and $RECLAIM_RESULTS/<name> are theirs
        variants = self.repo / 'kunit' / 'variants'
        for name in ('e2e', 'bisect', 'mutants', 'default', 'e2e-pre-cce0be6eb497'):
            with self.subTest(name=name):
                (variants / f'{name}.config').write_text('CONFIG_FOO=y\n')
                runs: list[tuple[str, list[str]]] = [
                    ('tools/run-suites', ['--variant', name]),
                    ('tools/run-suites', []), ('tools/kunit', ['run', '--no-setup'])]
                for tool, args in runs:
                    proc = self.tool(tool, *args)
                    self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                    self.assertIn(f"kunit/variants/{name}.config: the name "
                                  f"'{name}' is taken", proc.stderr)
                (variants / f'{name}.config').unlink()
        self.assertFalse((self.build / 'calls').exists())
        self.assertIn('mutants', kunitpy.RESERVED_VARIANTS)

    def test_every_directory_of_the_tools_own_is_reserved(self):
        import re
        repo = Path(__file__).resolve().parents[2]
        names = set()
        for path in [*(repo / 'tools').glob('*'), *(repo / 'tools' / 'lib').glob('*.py'),
                     *(repo / 'e2e').glob('*.py'), *(repo / 'ci').glob('*')]:
            if path.is_file():
                text = path.read_text(errors='replace')
                names |= set(re.findall(r"build_dir\('([^']+)'\)", text))
                names |= set(re.findall(r"results_dir\(\) / '([^']+)'", text))
                own = re.search(r"^NAME = '([^']+)'", text, re.M)
                if own and re.search(r'results_dir\(\) / NAME', text):
                    names.add(own.group(1))
        self.assertGreaterEqual(names, {'e2e', 'bisect', 'mutants'})
        self.assertIn('default', kunitpy.RESERVED_VARIANTS)
        # tools/e2e build's own (review F15): harness.build_dir() of the
        # kernels a diff makes, $RECLAIM_BUILD_DIR/e2e-pre-cce0be6eb497 ...
        sys.path.insert(0, str(repo / 'e2e'))
        import harness
        e2e = {harness.build_dir(k).name
               for k in ('branch', *harness.DIFF_KERNELS, harness.BASE_KERNEL)}
        self.assertLessEqual({'e2e-pre-cce0be6eb497', 'e2e-base'}, e2e)
        names |= e2e
        self.assertLessEqual(names, set(kunitpy.RESERVED_VARIANTS))

    def test_kunit_py_missing(self):
        shutil.rmtree(self.kunit_dir)
        proc = self.tool('tools/run-suites')
        self.assertEqual(proc.returncode, 3)
        self.assertIn('kunit.py not found', proc.stderr)
        proc = self.tool('tools/kunit', 'run', '--no-setup')
        self.assertEqual(proc.returncode, 3)
        self.assertIn('kunit.py not found', proc.stderr)

    def test_no_prepared_tree(self):
        proc = self.tool('tools/run-suites', env={'RECLAIM_TREE': str(self.tmp / 'x')})
        self.assertEqual(proc.returncode, 3)
        self.assertIn('run tools/prepare first', proc.stderr)

    def test_kunit_run_passes_arguments_through_and_sums_up(self):
        proc = self.tool('tools/kunit', 'run', '--no-setup', 'alpha',
                         '--kernel_args=foo=1')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        run = [c for c in self.calls() if c.startswith('run ')][0]
        self.assertIn('--kunitconfig=' + str(self.repo / '.kunitconfig'), run)
        self.assertIn('--kernel_args=foo=1', run)
        self.assertIn('--kernel_args=oops=panic --kernel_args=panic=-1', run)
        self.assertEqual(run.split()[-2:], ['alpha', '--kernel_args=foo=1'])
        self.assertIn('kunit: 3 passed, 0 failed, 0 skipped', proc.stdout)

    def test_kunit_run_where_nothing_passes_fails(self):
        # delta: its only case skips, as a filter that matches nothing leaves
        # no case at all: either way nothing was checked
        proc = self.tool('tools/kunit', 'run', '--no-setup', 'delta')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn('kunit: 0 passed, 0 failed, 1 skipped', proc.stdout)
        self.assertIn('no test passed', proc.stdout)

    def test_two_tools_never_share_a_build_directory(self):
        import sys
        sys.path.insert(0, str(self.repo / 'tools' / 'lib'))
        import kunitpy
        build = self.tmp / 'build' / 'default'
        with kunitpy.build_lock(build, 'a test holding it'):
            proc = self.tool('tools/kunit', 'run', '--no-setup', 'alpha')
            self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
            self.assertIn('is in use by a test holding it', proc.stderr)
            self.assertFalse((build / 'calls').exists(),
                             'kunit.py must not run while another tool holds the build')
            proc = self.tool('tools/run-suites')
            self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        proc = self.tool('tools/kunit', 'run', '--no-setup', 'alpha')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)

    def test_kunit_py_options_are_checked_before_anything_runs(self):
        # with a prepared tree (its kunit.py's options) and without one
        # (6.12's as the tools know them): refused before setup or prepare
        for env in ({}, {'RECLAIM_TREE': str(self.tmp / 'no-tree')}):
            with self.subTest(env=env):
                proc = self.tool('tools/kunit', 'run', '--no-setup', '--bogus',
                                 env=env)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn('kunit.py run: unrecognized arguments: --bogus',
                              proc.stderr)
                self.assertNotIn('prepare', proc.stdout + proc.stderr)
                proc = self.tool('tools/kunit', 'run', '--no-setup',
                                 '--timeout=soon', env=env)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn("--timeout: invalid int value: 'soon'", proc.stderr)
        self.assertFalse((self.build / 'calls').exists())

    def test_what_the_tools_choose_or_cannot_count_is_refused(self):
        for arg, words in (('--build_dir=elsewhere', 'chosen by the tools'),
                           ('--arch=um', 'chosen by the tools'),
                           ('--run_isolated=suite', 'only the last one')):
            with self.subTest(arg=arg):
                proc = self.tool('tools/kunit', 'run', '--no-setup', arg)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn(words, proc.stderr)
        self.assertFalse((self.build / 'calls').exists())
        # no summary asked for: kunit.py may boot a kernel per suite
        proc = self.tool('tools/kunit', 'run', '--no-setup',
                         '--run_isolated=suite', '--raw_output')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('--run_isolated=suite --raw_output', self.calls()[-1])

    def test_help_shows_kunit_py_options(self):
        for env in ({}, {'RECLAIM_TREE': str(self.tmp / 'no-tree')}):
            with self.subTest(env=env):
                proc = self.tool('tools/kunit', 'run', '-h', env=env)
                self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
                self.assertIn('usage: tools/kunit', proc.stdout)
                self.assertIn('kunit.py run options, passed through', proc.stdout)
                self.assertIn('--kunitconfig', proc.stdout)
                self.assertIn('--run_isolated', proc.stdout)
                # kunit.py's options the tools refuse are not offered
                kunit_py = proc.stdout.split('kunit.py run options', 1)[1]
                self.assertNotIn('--build_dir', kunit_py.split(':', 1)[1])
                self.assertNotIn('--arch', kunit_py.split(':', 1)[1])
                self.assertIn('--build_dir and --arch, the tools\' to choose, '
                              'are refused', ' '.join(kunit_py.split()))
        self.assertIn("6.12's, as the tools know it", proc.stdout)
        proc = self.tool('tools/kunit', '-h')
        self.assertEqual(proc.returncode, 0)
        self.assertNotIn('kunit.py run options', proc.stdout)
        self.assertFalse((self.build / 'calls').exists())

    def test_help_before_a_tree_says_the_descriptions_come_with_it(self):
        # review F14: 6.12's copy has the options' names, not their help
        note = ("kunit.py's own descriptions of its options are listed here "
                "once the tree is prepared")
        proc = self.tool('tools/kunit', 'run', '-h',
                         env={'RECLAIM_TREE': str(self.tmp / 'no-tree')})
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn(note, ' '.join(proc.stdout.split()))
        proc = self.tool('tools/kunit', 'run', '-h')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertNotIn(note, ' '.join(proc.stdout.split()))

    def test_jobs_is_kunit_py_default_unless_given(self):
        self.tool('tools/kunit', 'build', '--no-setup')
        self.assertNotIn('--jobs', self.calls()[-1])
        self.tool('tools/kunit', 'build', '--no-setup', '--jobs=1')
        self.assertEqual(self.calls()[-1].count('--jobs'), 1)

    def test_a_build_leaves_its_size_for_the_next_heartbeat(self):
        (self.build / 'mm').mkdir(parents=True)
        for name in ('a.o', 'b.o', 'c.c'):
            (self.build / 'mm' / name).write_text('')
        proc = self.tool('tools/kunit', 'build', '--no-setup')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        stats = json.loads((self.build / '.kbranch-build.json').read_text())
        self.assertEqual(stats['objects'], 2)
        self.assertIn('Building KUnit Kernel', proc.stdout)
        # a failed build leaves the last good one's
        (self.build / 'mm' / 'd.o').write_text('')
        self.tool('tools/kunit', 'build', '--no-setup',
                  env={'FAKE_KUNIT_BUILD': 'fail'})
        stats = json.loads((self.build / '.kbranch-build.json').read_text())
        self.assertEqual(stats['objects'], 2)

    def test_a_crash_after_partial_results_counts_both(self):
        proc = self.tool('tools/run-suites', '--suite', 'zeta',
                         env={'FAKE_KUNIT_PARTIAL': '1'})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.strip().splitlines()[-1],
                         'kunit: 1 passed, 1 failed, 0 skipped')
        self.assertIn('zeta: missing case (ERROR: the kernel never reported it)',
                      proc.stdout)
        proc = self.tool('tools/kunit', 'run', '--no-setup', 'zeta',
                         env={'FAKE_KUNIT_PARTIAL': '1'})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn('kunit: FAILED zeta: missing case', proc.stdout)
        self.assertIn('kunit: 1 passed, 1 failed, 0 skipped', proc.stdout)

    def test_a_kernel_that_lists_no_test_is_an_error(self):
        proc = self.tool('tools/run-suites', env={'FAKE_KUNIT_LIST': 'empty'})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn('--list_tests listed no test', proc.stderr)

    def test_kunit_exec_needs_a_build(self):
        proc = self.tool('tools/kunit', 'exec')
        self.assertEqual(proc.returncode, 3)
        self.assertIn('run tools/kunit build first', proc.stderr)


DATA = Path(__file__).resolve().parent / 'data'

# A WARNING as the kernel prints one, with its stack trace.
WARNING = """\
[    3.141592] ------------[ cut here ]------------
[    3.141592] WARNING: CPU: 1 PID: 77 at mm/vmscan.c:4907 evict_folios+0x5d2/0x8a0
[    3.141593] Modules linked in:
[    3.141594] Call Trace:
[    3.141594]  <TASK>
[    3.141595]  try_to_shrink_lruvec+0x23d/0x300
[    3.141596]  </TASK>
[    3.141597] ---[ end trace 0000000000000000 ]---
"""


class ConsoleOracleTest(unittest.TestCase):

    def test_a_clean_console_has_no_report(self):
        # a real console of the vmscan_isolation_lockdep suite: its cases
        # provoke lockdep reports, which do not reach the console
        self.assertEqual(kunitpy.console_reports((DATA / 'kunit-clean.log').read_text()), [])

    def test_unannounced_reports_are_found(self):
        found = kunitpy.console_reports(WARNING)
        self.assertEqual(len(found), 2, found)
        self.assertIn('WARNING: CPU: 1 PID: 77', found[0])
        self.assertEqual(found[1], '[    3.141594] Call Trace:')
        for line in ('[    9.0] BUG: KASAN: slab-use-after-free in foo+0x1/0x2',
                     '[    9.0] UBSAN: shift-out-of-bounds in mm/vmscan.c:12:3',
                     '[    9.0] BUG: KFENCE: out-of-bounds read in bar',
                     '[    9.0] WARNING: possible circular locking dependency detected',
                     '[    9.0] Oops: general protection fault, probably for non-canonical',
                     '[    9.0] kernel BUG at mm/vmscan.c:1599!',
                     '[    9.0] Kernel panic - not syncing: Fatal exception',
                     '[    9.0] INFO: task kworker/0:1:12 blocked for more than 20 seconds.',
                     '[    9.0] rcu: INFO: rcu_preempt self-detected stall on CPU'):
            with self.subTest(line=line):
                self.assertEqual(kunitpy.console_reports(line), [line])
        self.assertEqual(kunitpy.console_reports('    # the case expects a WARNING here'), [])

    def test_a_real_oops_is_found(self):
        # a real console: a vmscan_isolation case dereferencing a NULL memory
        # cgroup (a mutation of its fixture), booted with oops=panic panic=-1
        found = kunitpy.console_reports((DATA / 'kunit-oops.log').read_text())
        self.assertEqual(found, ['BUG: kernel NULL pointer dereference, address: 0000000000000120',
                                 'Oops: Oops: 0000 [#1] PREEMPT SMP NOPTI',
                                 'Call Trace:',
                                 'Kernel panic - not syncing: Fatal exception'])

    def test_an_announced_report_is_allowed_once(self):
        text = ('    # one: expect report: mm/vmscan.c:4907\n' + WARNING +
                '    ok 1 one\n' + WARNING)
        found = kunitpy.console_reports(text)
        # the first report and its trace are allowed, the second is not
        self.assertEqual(len(found), 2, found)
        self.assertIn('WARNING: CPU: 1', found[0])

    def test_an_announcement_allows_only_its_report(self):
        text = '    # one: expect report: possible recursive locking\n' + WARNING
        self.assertEqual(len(kunitpy.console_reports(text)), 2)


class CountTest(unittest.TestCase):

    def write(self, text):
        fd, name = tempfile.mkstemp(prefix='kbranch-count-', suffix='.json')
        os.close(fd)
        Path(name).write_text(text)
        self.addCleanup(os.unlink, name)
        return name

    def test_leaves_are_counted_and_failures_named(self):
        path = self.write(json.dumps({'name': 'KUnit Test Group', 'sub_groups': [
            {'name': 's', 'test_cases': [{'name': 'a', 'status': 'PASS'},
                                         {'name': 'b', 'status': 'FAIL'},
                                         {'name': 'c', 'status': 'ERROR'}],
             'sub_groups': [{'name': 'p', 'test_cases': [
                 {'name': 'p1', 'status': 'SKIP'}], 'sub_groups': []}]}],
            'test_cases': []}))
        counts = kunitpy.count_json(path)
        self.assertEqual((counts.passed, counts.failed, counts.skipped), (1, 2, 1))
        self.assertEqual(counts.failures, ['s.b: FAIL', 's.c: ERROR'])

    def test_a_case_the_kernel_never_reported(self):
        path = self.write(json.dumps({'name': 'KUnit Test Group', 'sub_groups': [
            {'name': 's', 'test_cases': [{'name': '', 'status': 'ERROR'}],
             'sub_groups': []}], 'test_cases': []}))
        self.assertEqual(kunitpy.count_json(path).failures,
                         ['s: missing case (ERROR: the kernel never reported it)'])

    def test_unparseable(self):
        for text in ('{not json', '[1, 2]', ''):
            with self.subTest(text=text):
                with self.assertRaises(cli.ToolError):
                    kunitpy.count_json(self.write(text))


class HeartbeatTest(unittest.TestCase):

    def setUp(self):
        self.build = Path(tempfile.mkdtemp(prefix='kbranch-beat-'))
        self.addCleanup(shutil.rmtree, self.build)
        for i in range(3):
            (self.build / f'{i}.o').write_text('')

    def test_lines_while_building_and_an_estimate_from_the_last_build(self):
        import io
        out = io.StringIO()
        beat = kunitpy.Heartbeat(self.build, out=out, period=0.05)
        self.assertIsNone(beat.last)
        beat.begin()
        import time
        time.sleep(0.3)
        beat.end(True)
        lines = out.getvalue().splitlines()
        self.assertGreaterEqual(len(lines), 2, lines)
        self.assertIn('kunit: still building after 0 min 00 s: 0 object files '
                      'written, 3 in', lines[0])
        self.assertEqual(json.loads((self.build / '.kbranch-build.json')
                                    .read_text())['objects'], 3)
        beat = kunitpy.Heartbeat(self.build)
        self.assertEqual((beat.last or {}).get('objects'), 3)
        # 1 of 3 written in 60 s, 2 to go: 2 min
        self.assertEqual(beat.line(1, 1, 60.0),
                         f'kunit: still building after 1 min 00 s: 1 object '
                         f'files written, 1 in {self.build} (3 after its last '
                         f'complete build: about 2 min left at this rate)')
        self.assertNotIn('left', beat.line(3, 3, 60.0))


class KunitPyCommandLineTest(unittest.TestCase):
    """The copy of 6.12's kunit.py command line in tools/lib/kunitpy.py
    (what tools/kunit checks against without a tree, and what the fake
    accepts) against the prepared tree's own kunit.py."""

    def test_the_copy_is_the_tree_s_command_line(self):
        tree = paths.tree_dir()
        groups = kunitpy.tree_groups(tree)
        if groups is None:
            self.skipTest(f'no prepared kernel tree at {tree} (ci/test '
                          f'prepares it before this runs)')
        for action in kunitpy.ACTIONS:
            with self.subTest(action=action):
                self.assertEqual(kunitpy.option_table(kunitpy.parser(action)),
                                 kunitpy.option_table(kunitpy.parser(action, groups)))

    def test_the_tools_own_arguments_parse(self):
        build = Path('/b')
        for action, args in (('build', kunitpy.build_args(build)),
                             ('run', kunitpy.build_args(build, jobs=2)),
                             ('exec', kunitpy.exec_args(build) + ['--list_tests'])):
            with self.subTest(action=action):
                kunitpy.parse_passthrough(action, args)
        ns = kunitpy.parse_passthrough('run', ['--json', 'alpha'])
        self.assertEqual((ns.json, ns.filter_glob), ('stdout', 'alpha'))
        with self.assertRaises(kunitpy.UsageError):
            kunitpy.parse_passthrough('build', ['--timeout=3'])


class RealParserTest(unittest.TestCase):
    """Unparseable KTAP through the kernel tree's own kunit.py parser."""

    def test_garbage_console_counts_nothing(self):
        tree = paths.tree_dir()
        if not (tree / 'tools/testing/kunit/kunit.py').is_file():
            self.skipTest(f'no prepared kernel tree at {tree} (ci/test '
                          f'prepares it before this runs)')
        tmp = Path(tempfile.mkdtemp(prefix='kbranch-garbage-'))
        self.addCleanup(shutil.rmtree, tmp)
        log, out = tmp / 'garbage.log', tmp / 'garbage.json'
        log.write_text('Linux version 6.12\nno tests here\n')
        proc = kunitpy.invoke(tree, ['parse', f'--json={out}', str(log)],
                              capture=True)
        self.assertNotEqual(proc.returncode, 0, proc.stdout)
        self.assertIn('Could not find any KTAP output', proc.stdout)
        self.assertEqual(kunitpy.count_json(out).total, 0)


if __name__ == '__main__':
    unittest.main()
