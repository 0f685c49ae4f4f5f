# SPDX-License-Identifier: GPL-2.0
"""tools/lib/kcidb.py and ci/test --merge: the tools' KCIDB v4.0 data is
valid, the checker refuses what the schema does not allow, the counts are
those of the leaves, kcidb-io's validation runs when it is installed, and
the merge of the CI matrix's job results sums them and refuses a missing,
garbled or conflicting result (exit 2)."""

import copy
import json
import os
import subprocess
import sys
import unittest
from pathlib import Path
from unittest import mock

from fixtures import REPO, Isolated

sys.path.insert(0, str(REPO / 'tools' / 'lib'))
import kcidb

COMMIT = 'c' * 40
BASE = 'b' * 40


def sample(job='kunit-default', statuses=('PASS', 'FAIL', 'SKIP'),
           valid=True, commit=COMMIT):
    """A job's data as the tools make it: a checkout, a build and its
    tests (with a KTAP output file)."""
    checkout = kcidb.checkout(commit, [REPO / 'kernel-patches' / 'series'], BASE)
    build = kcidb.build(job, checkout['id'], config_name='default',
                        valid=valid, start_time=kcidb.timestamp(0),
                        duration=12.5)
    tests = [kcidb.test(build['id'], f'case{i}', f'kunit.suite.case{i}', status,
                        output_files=[{'name': 'suite.ktap',
                                       'url': 'file:///r/suite.ktap'}],
                        misc={'kunit_status': status})
             for i, status in enumerate(statuses)]
    return kcidb.dataset([checkout], [build], tests)


class CheckerTest(unittest.TestCase):

    def test_the_tools_data_is_valid(self):
        data = sample()
        self.assertEqual(kcidb.problems(data), [])
        self.assertEqual(kcidb.references(data), [])
        self.assertEqual(data['version'], {'major': 4, 'minor': 0})
        checkout = data['checkouts'][0]
        self.assertEqual(checkout['id'], f'reclaim:{COMMIT}')
        self.assertEqual(checkout['git_commit_hash'], BASE)
        self.assertRegex(checkout['patchset_hash'], r'^[0-9a-f]{64}$')
        self.assertEqual(kcidb.patchset_hash([]), '')
        self.assertEqual(data['builds'][0]['start_time'], '1970-01-01T00:00:00+00:00')

    def test_the_checker_refuses_what_v4_0_does_not_allow(self):
        def change(where, key, value):
            def edit(data):
                target = data if where is None else data[where[0]][where[1]]
                if value is DELETE:
                    del target[key]
                else:
                    target[key] = value
            return edit

        DELETE = object()
        cases = [
            (change(None, 'version', {'major': 5}), 'version: '),
            (change(None, 'version', {'major': 4, 'minor': 1}), 'version: '),
            (change(None, 'version', DELETE), 'version: missing (required)'),
            (change(None, 'issues', []), 'issues: not a property'),
            (change(None, 'tests', {}), 'tests: {} is not a list'),
            (change(('tests', 0), 'status', 'OK'),
             "tests[0].status: 'OK' is not one of FAIL, ERROR, PASS, DONE, SKIP"),
            # MISS came with v4.1
            (change(('tests', 0), 'status', 'MISS'), 'tests[0].status: '),
            (change(('tests', 0), 'id', 'no-origin'), 'tests[0].id: '),
            (change(('tests', 0), 'id', 'Reclaim:x'), 'tests[0].id: '),
            (change(('tests', 0), 'build_id', DELETE),
             'tests[0].build_id: missing (required)'),
            (change(('tests', 0), 'path', 'kunit.a case'), 'tests[0].path: '),
            (change(('tests', 0), 'log_excerpt', 'x' * 16385),
             'tests[0].log_excerpt: 16385 characters, more than 16384'),
            (change(('tests', 0), 'output_files', [{'name': 'a/b', 'url': 'file:///a'}]),
             'tests[0].output_files: [0]: '),
            (change(('tests', 0), 'output_files', [{'name': 'a', 'url': 'no uri'}]),
             'tests[0].output_files: [0]: '),
            (change(('tests', 0), 'output_files', [{'name': 'a'}]),
             'tests[0].output_files: [0]: a resource has name and url only'),
            (change(('tests', 0), 'environment', {'host': 'x'}),
             'tests[0].environment: unknown properties'),
            (change(('tests', 0), 'duration', True), 'tests[0].duration: '),
            (change(('tests', 0), 'number', {'value': 1}),
             'tests[0].number: not a property of a KCIDB v4.0 test'),
            (change(('builds', 0), 'valid', 'yes'),
             "builds[0].valid: 'yes' is not a boolean"),
            (change(('builds', 0), 'architecture', 'x86-64'), 'builds[0].architecture: '),
            (change(('builds', 0), 'start_time', 'yesterday'), 'builds[0].start_time: '),
            (change(('builds', 0), 'status', 'PASS'),
             'builds[0].status: not a property of a KCIDB v4.0 build'),
            (change(('checkouts', 0), 'git_commit_hash', 'abc'),
             'checkouts[0].git_commit_hash: '),
            (change(('checkouts', 0), 'patchset_hash', 'abc'),
             'checkouts[0].patchset_hash: '),
            (change(('checkouts', 0), 'git_repository_url', 'file:///x'),
             'checkouts[0].git_repository_url: '),
            (change(('checkouts', 0), 'origin', 'CI'), 'checkouts[0].origin: '),
            (change(('checkouts', 0), 'misc', []), 'checkouts[0].misc: '),
        ]
        for edit, message in cases:
            data = sample()
            edit(data)
            with self.subTest(message=message):
                found = kcidb.problems(data)
                self.assertTrue(any(p.startswith(message) for p in found), found)
                self.assertTrue(kcidb.validate(data))
        self.assertEqual(kcidb.problems([1]), ['the data is not an object: list'])

    def test_references_within_a_file(self):
        data = sample()
        data['tests'][1]['build_id'] = 'reclaim:elsewhere'
        data['tests'][2]['id'] = data['tests'][0]['id']
        self.assertEqual(kcidb.problems(data), [])
        self.assertEqual(kcidb.references(data), [
            f"tests[2].id: {data['tests'][0]['id']!r} is given twice",
            "tests[1].build_id: 'reclaim:elsewhere' names no build of this file"])

    def test_the_counts_are_the_leaves(self):
        self.assertEqual(kcidb.tally(sample()), (1, 1, 1))
        data = sample(statuses=('PASS', 'DONE', 'ERROR', 'SKIP'))
        data['tests'][2]['waived'] = True
        self.assertEqual(kcidb.tally(data), (2, 0, 2))
        # a build without tests counts by whether it built (a bisect
        # prefix, a failed KUnit build); one without valid counts nothing
        self.assertEqual(kcidb.tally(sample(statuses=(), valid=True)), (1, 0, 0))
        self.assertEqual(kcidb.tally(sample(statuses=(), valid=False)), (0, 1, 0))
        data = sample(statuses=())
        del data['builds'][0]['valid']
        self.assertEqual(kcidb.tally(data), (0, 0, 0))
        # a checkout without builds: bisect on a tree that is not the series
        data = kcidb.dataset([kcidb.checkout(COMMIT, [], None, valid=False)], [], [])
        self.assertEqual(kcidb.problems(data), [])
        self.assertEqual(kcidb.tally(data), (0, 1, 0))

    def test_names_and_urls(self):
        self.assertEqual(kcidb.path_part('order 0: a.b'), 'order_0__a_b')
        self.assertEqual(kcidb.path_part(''), '_')
        results = Path('/work/results/kunit-x')
        with mock.patch.dict(os.environ, {'RECLAIM_RESULTS_URL': ''}):
            self.assertEqual(kcidb.url(results, 'a b.log'),
                             'file:///work/results/kunit-x/a%20b.log')
        with mock.patch.dict(os.environ, {'RECLAIM_RESULTS_URL':
                                          'https://ci.example.org/-/jobs/7/artifacts/raw/'}), \
                mock.patch.object(Path, 'cwd', return_value=Path('/work')):
            self.assertEqual(kcidb.url(results, 'a b.log'),
                             'https://ci.example.org/-/jobs/7/artifacts/raw/'
                             'results/kunit-x/a%20b.log')
            # outside the working directory: its own file
            self.assertEqual(kcidb.url(Path('/elsewhere'), 'x.log'), 'file:///elsewhere/x.log')
        with mock.patch.dict(os.environ, {'RECLAIM_KCIDB_ORIGIN': 'Bad-Origin'}):
            with self.assertRaises(kcidb.ToolError) as ctx:
                kcidb.origin()
            self.assertEqual(ctx.exception.code, 2)

    def test_write_refuses_invalid_data(self):
        data = sample()
        data['tests'][0]['status'] = 'OK'
        with self.assertRaises(kcidb.ToolError) as ctx:
            kcidb.write(Path('/nonexistent/kcidb.json'), data)
        self.assertIn('is not valid (a bug of the tools)', str(ctx.exception))

    def test_union_keeps_each_object_once_and_refuses_a_conflict(self):
        a, b = sample('job-a'), sample('job-b')
        merged = kcidb.union([a, b])
        self.assertEqual(len(merged['checkouts']), 1)     # one commit
        self.assertEqual(len(merged['builds']), 2)
        self.assertEqual(kcidb.problems(merged) + kcidb.references(merged), [])
        c = copy.deepcopy(a)
        c['tests'][0]['status'] = 'FAIL'
        with self.assertRaises(kcidb.ToolError) as ctx:
            kcidb.union([a, c])
        self.assertIn('is reported twice, differently', str(ctx.exception))


FAKE_KCIDB_IO = '''
class V4_0:
    @staticmethod
    def validate(data):
        if data.get('tests') and data['tests'][0].get('comment') == 'refuse me':
            raise ValueError("'refuse me' is not accepted\\n\\nmore lines")
        return data
'''


class KcidbIoTest(Isolated):
    """The hook that runs kcidb-io's validation when it is installed, with
    a stand-in for kcidb-io (not its code: a module of the same name)."""

    def setUp(self):
        super().setUp()
        self.addCleanup(self.forget)
        self.forget()

    def forget(self):
        for name in ('kcidb_io', 'kcidb_io.schema'):
            sys.modules.pop(name, None)

    def test_without_kcidb_io_only_the_own_checker_runs(self):
        with mock.patch.object(sys, 'path', [p for p in sys.path]):
            if kcidb.kcidb_io_schema() is not None:
                self.skipTest('kcidb-io is installed here')
            self.assertIsNone(kcidb.kcidb_io_problems(sample()))
            self.assertEqual(kcidb.validate(sample()), [])

    def test_with_kcidb_io_its_validation_runs_too(self):
        package = self.tmp / 'site' / 'kcidb_io'
        package.mkdir(parents=True)
        (package / '__init__.py').write_text('')
        (package / 'schema.py').write_text(FAKE_KCIDB_IO)
        with mock.patch.object(sys, 'path', [str(self.tmp / 'site'), *sys.path]):
            data = sample()
            self.assertEqual(kcidb.kcidb_io_problems(data), [])
            data['tests'][0]['comment'] = 'refuse me'
            self.assertEqual(kcidb.validate(data),
                             ["kcidb-io: 'refuse me' is not accepted"])

    def test_the_real_kcidb_io_accepts_the_tools_data(self):
        schema = kcidb.kcidb_io_schema()
        if schema is None:
            self.skipTest('kcidb-io is not installed: PyPI is not reachable '
                          'from this project\'s machines (docs/ci.md)')
        self.assertEqual(kcidb.kcidb_io_problems(sample()), [])
        data = sample()
        data['tests'][0]['status'] = 'OK'
        self.assertTrue(kcidb.kcidb_io_problems(data))


class MergeTest(Isolated):
    """ci/test --merge over job results directories."""

    def job(self, name, data=None, **kwargs):
        d = self.tmp / 'results' / name
        d.mkdir(parents=True)
        if data is None:
            data = sample(name, **kwargs)
        (d / 'kcidb.json').write_text(data if isinstance(data, str) else json.dumps(data))
        return d

    def merge(self, *args):
        proc = subprocess.run([sys.executable, str(REPO / 'ci' / 'test'), *map(str, args)],
                              cwd=self.tmp, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        return proc, proc.stdout.splitlines()

    def test_the_jobs_are_summed(self):
        a = self.job('kunit-no-lockdep', statuses=('PASS', 'PASS', 'SKIP'))
        b = self.job('mutants-18', statuses=('PASS', 'SKIP', 'SKIP'))
        patches = [REPO / 'kernel-patches' / 'series']
        shard = kcidb.dataset(
            [kcidb.checkout('d' * 40, [], BASE), kcidb.checkout(COMMIT, patches, BASE)],
            [kcidb.build('bisect-01', f'reclaim:{"d" * 40}', valid=True),
             kcidb.build('bisect-02', f'reclaim:{COMMIT}', valid=True)], [])
        c = self.job('bisect-1-2', shard)
        out = self.tmp / 'merged.json'
        proc, lines = self.merge('--merge', a, b, c, '--output', out)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(lines[0].split(), ['job', 'passed', 'failed', 'skipped'])
        self.assertEqual(lines[1].split(), ['kunit-no-lockdep', '2', '0', '1'])
        self.assertEqual(lines[2].split(), ['mutants-18', '1', '0', '2'])
        self.assertEqual(lines[3].split(), ['bisect-1-2', '2', '0', '0'])
        self.assertEqual(lines[-1], '5 passed, 0 failed, 3 skipped')
        merged = json.loads(out.read_text())
        self.assertEqual(kcidb.validate(merged), [])
        # the jobs' checkouts of one commit are one checkout
        self.assertEqual(len(merged['checkouts']), 2)
        self.assertEqual(len(merged['builds']), 4)
        self.assertEqual(len(merged['tests']), 6)
        installed = kcidb.kcidb_io_schema() is not None
        self.assertIn('KCIDB v4.0, checked by tools/lib/kcidb.py' +
                      (' and kcidb-io' if installed else
                       '; kcidb-io is not installed: its validation did not run'),
                      lines)

    def test_a_failed_job_fails_the_merge(self):
        a = self.job('kunit-sanitizers', statuses=('PASS', 'FAIL', 'ERROR'))
        b = self.job('bisect-1-9', statuses=(), valid=False)
        proc, lines = self.merge('--merge', a, b)
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(lines[-1], '1 passed, 3 failed, 0 skipped')
        self.assertEqual(proc.stderr, '')

    def test_a_missing_job_result_is_an_error(self):
        a = self.job('kunit-no-lockdep', statuses=('PASS',))
        empty = self.tmp / 'results' / 'mutants-3'
        empty.mkdir()
        gone = self.tmp / 'results' / 'mutants-4'
        proc, lines = self.merge('--merge', a, empty, gone)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn(f'ci/test: error: {empty}/kcidb.json: no such file: the '
                      f'job wrote no result (it stopped before its end, or its '
                      f'results were not kept)', proc.stderr)
        self.assertIn(f"ci/test: error: {gone}: no such directory: the job's "
                      f"results are missing", proc.stderr)
        self.assertEqual(lines[2].split()[:4], ['mutants-3', '0', '1', '0'])
        self.assertEqual(lines[-1], '1 passed, 2 failed, 0 skipped')

    def test_a_garbled_result_is_an_error(self):
        for name, text, message in (
                ('cut', '{"version": {"major": 4', 'not JSON'),
                ('empty', '', 'not JSON'),
                ('list', '[]', 'not valid KCIDB v4.0 data: the data is not an object'),
                ('status', json.dumps(sample(statuses=('OK',))),
                 "not valid KCIDB v4.0 data: tests[0].status: 'OK' is not one of"),
                ('dangling', json.dumps({**sample(), 'builds': []}),
                 "not valid KCIDB v4.0 data: tests[0].build_id: 'reclaim:")):
            with self.subTest(name=name):
                d = self.job(name, text)
                proc, lines = self.merge('--merge', d)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn(f'ci/test: error: {d}/kcidb.json: {message}', proc.stderr)
                self.assertEqual(lines[-1], '0 passed, 1 failed, 0 skipped')

    def test_jobs_that_disagree_or_count_twice_are_errors(self):
        a = self.job('a', sample('kunit-x'))
        b = self.job('b', sample('kunit-x', statuses=('FAIL',)))
        proc, _ = self.merge('--merge', a, b)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('is reported twice, differently', proc.stderr)
        proc, _ = self.merge('--merge', a, a)
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('given twice: its results would count twice', proc.stderr)

    def test_merge_takes_no_step_options(self):
        a = self.job('a')
        for args in (['--merge', a, '--full'], ['--merge', a, '--save-work'],
                     ['--output', self.tmp / 'x.json'], ['--merge']):
            with self.subTest(args=args):
                proc, _ = self.merge(*args)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn('usage:', proc.stderr)
                self.assertFalse((self.tmp / 'x.json').exists())


if __name__ == '__main__':
    unittest.main()
