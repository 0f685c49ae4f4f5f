# SPDX-License-Identifier: GPL-2.0
""".gitlab-ci.yml, the slow checks as a parallel matrix (docs/ci.md),
against what it runs: a job per configuration of kunit/variants/, bisect
shards that cover the series once, a mutants job per patch; each job one
tools command with a results directory of its own, kept as an artifact;
the merge job reads exactly those directories, even after a failed job."""

import importlib
import re
import shlex
import sys
import unittest

from fixtures import REPO, load_tool

sys.path.insert(0, str(REPO / 'tools' / 'lib'))
import kunitpy
import series

# python3-yaml (tools/setup installs it); imported by name: mypy has no
# stubs for it here
yaml = importlib.import_module('yaml')


def expand(text, variables):
    """$NAME and ${NAME} of @text replaced from @variables."""
    return re.sub(r'\$\{?(\w+)\}?', lambda m: variables.get(m.group(1), m.group(0)),
                  text)


class GitlabCiTest(unittest.TestCase):

    def setUp(self):
        self.ci = yaml.safe_load((REPO / '.gitlab-ci.yml').read_text())
        self.patches = len(series.read_series())

    def matrix(self, job):
        """Each job of a parallel:matrix job, as its variables."""
        jobs = []
        for entry in self.ci[job]['parallel']['matrix']:
            combos: list[dict[str, str]] = [{}]
            for name, values in entry.items():
                values = values if isinstance(values, list) else [values]
                combos = [{**c, name: str(v)} for c in combos for v in values]
            jobs += combos
        return jobs

    def commands(self, job):
        """The command of each job of @job's matrix, as argv."""
        [line] = self.ci[job]['script']     # one tools command a job
        return [shlex.split(expand(line, variables)) for variables in self.matrix(job)]

    def results_of(self, argv):
        return argv[argv.index('--results') + 1]

    def test_a_job_per_variant(self):
        variants = [v for v in kunitpy.variants() if v != 'default']
        self.assertEqual(len(variants), 6)
        commands = self.commands('kunit')
        self.assertEqual(commands, [['tools/run-suites', '--variant', v, '--results',
                                     f'results/kunit-{v}'] for v in variants])

    def test_the_bisect_shards_cover_the_series_once(self):
        built: list[int] = []
        tool = load_tool('tools/check-series', 'check_series')
        for argv in self.commands('bisect'):
            self.assertEqual(argv[:2], ['tools/check-series', 'bisect'])
            args = tool.parser_of().parse_args(argv[1:])
            built += range(args.start, args.end + 1)
            self.assertEqual(self.results_of(argv),
                             f'results/bisect-{args.start}-{args.end}')
        self.assertEqual(built, list(range(1, self.patches + 1)))

    def test_a_mutants_job_per_patch(self):
        commands = self.commands('mutants')
        self.assertEqual(commands, [['tools/mutants', '--patch', str(n), '--results',
                                     f'results/mutants-{n}']
                                    for n in range(1, self.patches + 1)])

    def test_each_job_builds_and_keeps_its_results_apart(self):
        self.assertEqual(self.ci['variables']['RECLAIM_BUILD_DIR'], '$CI_PROJECT_DIR/.build')
        self.assertEqual(self.ci['variables']['RECLAIM_CACHE'], '$CI_PROJECT_DIR/.reclaim')
        self.assertEqual(self.ci['variables']['RECLAIM_RUN_ID'], '$CI_PIPELINE_ID')
        slow = self.ci['.slow']
        self.assertEqual(slow['artifacts']['paths'], ['results/'])
        self.assertEqual(slow['artifacts']['when'], 'always')
        self.assertEqual(slow['before_script'][1:3], ['tools/setup', 'tools/prepare'])
        dirs = []
        for job in ('kunit', 'bisect', 'mutants'):
            self.assertEqual(self.ci[job]['extends'], '.slow')
            self.assertEqual(self.ci[job]['stage'] if 'stage' in self.ci[job]
                             else slow['stage'], 'slow')
            dirs += [self.results_of(argv) for argv in self.commands(job)]
        self.assertEqual(len(dirs), len(set(dirs)))
        self.assertEqual(len(dirs), 6 + 3 + self.patches)

    def test_the_merge_reads_every_job_s_results(self):
        merge = self.ci['merge']
        self.assertEqual((merge['stage'], merge['when']), ('merge', 'always'))
        self.assertEqual(merge['needs'], ['kunit', 'bisect', 'mutants'])
        [line] = merge['script']
        argv = shlex.split(line)
        self.assertEqual(argv[1:4], ['ci/test', '--output', 'results/kcidb.json'])
        self.assertEqual(argv[4], '--merge')
        expected = [self.results_of(a) for job in ('kunit', 'bisect', 'mutants')
                    for a in self.commands(job)]
        self.assertEqual(argv[5:], expected)
        # kcidb-io pinned to a commit, for its own validation
        self.assertRegex(' '.join(merge['before_script']),
                         r'kcidb-io @ git\+https://github\.com/kernelci/kcidb-io@[0-9a-f]{40}')


if __name__ == '__main__':
    unittest.main()
