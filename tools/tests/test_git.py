# SPDX-License-Identifier: GPL-2.0
"""git as the tools run it: a git that fails because the environment is
wrong (no git, no repository) exits 3, any other failure 1, and both name
git's own reason; a patch git am cannot read is refused with git's reason."""

import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

from fixtures import Isolated, ScratchRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lib'))
import cli
import kgit


class GitTest(Isolated):

    def setUp(self):
        super().setUp()
        # git must not find a repository above the test's directory
        os.environ['GIT_CEILING_DIRECTORIES'] = str(self.tmp)

    def refused(self, tree, *args):
        with self.assertRaises(cli.ToolError) as ctx:
            kgit.git(tree, *args)
        return ctx.exception

    def test_not_a_repository_is_the_environment(self):
        plain = self.tmp / 'plain'
        plain.mkdir()
        err = self.refused(plain, 'rev-parse', 'HEAD')
        self.assertEqual(err.code, cli.EXIT_ENV)
        self.assertIn(f'git rev-parse HEAD failed in {plain}: fatal: not a git '
                      f'repository', str(err))

    def test_a_missing_directory_is_the_environment(self):
        err = self.refused(self.tmp / 'gone', 'status')
        self.assertEqual(err.code, cli.EXIT_ENV)
        self.assertIn('fatal: cannot change to', str(err))

    def test_no_git_is_the_environment(self):
        empty = self.tmp / 'bin'
        empty.mkdir()
        os.environ['PATH'] = str(empty)
        for call in (lambda: kgit.git(self.tmp, 'status'),
                     lambda: kgit.rev(self.tmp, 'HEAD')):    # check=False
            with self.assertRaises(cli.ToolError) as ctx:
                call()
            self.assertEqual(ctx.exception.code, cli.EXIT_ENV)
            self.assertEqual(str(ctx.exception),
                             'git is not installed (tools/setup installs it)')

    def test_another_user_s_repository_is_the_environment(self):
        # what git 2.39 prints for a tree another user owns
        fake = self.tmp / 'bin' / 'git'
        fake.parent.mkdir()
        fake.write_text("#!/bin/sh\necho \"fatal: detected dubious ownership "
                        "in repository at '/t'\" >&2\necho 'To add an exception "
                        "for this directory, call:' >&2\necho >&2\n"
                        "echo '\tgit config --global --add safe.directory /t' >&2\n"
                        "exit 128\n")
        fake.chmod(0o755)
        os.environ['PATH'] = f'{fake.parent}:{os.environ["PATH"]}'
        err = self.refused(self.tmp, 'status')
        self.assertEqual(err.code, cli.EXIT_ENV)
        self.assertTrue(str(err).endswith("fatal: detected dubious ownership in "
                                          "repository at '/t'"), str(err))

    def test_other_failures_are_failures_with_git_s_reason(self):
        repo = self.tmp / 'repo'
        kgit.git(self.tmp, 'init', '-q', str(repo))
        err = self.refused(repo, 'checkout', 'no-such-branch')
        self.assertEqual(err.code, cli.EXIT_FAIL)
        self.assertIn("failed in {}: error: pathspec 'no-such-branch' did not "
                      "match".format(repo), str(err))


class RepositoryVariablesTest(ScratchRepo):
    """Review F13: the variables that tie git to one repository (GIT_DIR,
    GIT_INDEX_FILE, GIT_WORK_TREE ..., exported inside a git hook, say)
    do not reach the tools' git, which runs on the kernel tree."""

    def test_git_env_drops_what_git_rev_parse_local_env_vars_names(self):
        named = subprocess.run(['git', 'rev-parse', '--local-env-vars'],
                               env=self.env, stdout=subprocess.PIPE,
                               text=True, check=True).stdout.split()
        for name in ('GIT_DIR', 'GIT_INDEX_FILE', 'GIT_WORK_TREE',
                     'GIT_CONFIG_PARAMETERS'):
            self.assertIn(name, named)
        local = {name: str(self.tmp / 'elsewhere') for name in named}
        with mock.patch.dict(os.environ, {**local, 'GIT_AUTHOR_NAME': 'A'}):
            env = kgit.git_env()
            self.assertEqual(sorted(set(named) & set(env)), [])
            self.assertEqual(env['GIT_AUTHOR_NAME'], 'A')   # not a repository's
            # a caller's own is kept: check-series' scratch index
            env = kgit.git_env({'GIT_INDEX_FILE': '/scratch/index'})
            self.assertEqual(env['GIT_INDEX_FILE'], '/scratch/index')
            self.assertNotIn('GIT_DIR', env)

    def test_prepare_and_export_under_a_hook_s_environment(self):
        # what a pre-commit hook of another repository exports
        other = self.tmp / 'other'
        self.git('init', '-q', str(other), cwd=self.tmp)
        hook = {'GIT_DIR': str(other / '.git'), 'GIT_WORK_TREE': str(other),
                'GIT_INDEX_FILE': str(other / '.git' / 'index')}
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        proc = self.tool('tools/export', env=hook)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((self.patches / 'series').read_text().splitlines()[-1],
                         '0001-mm-vmscan-change-three.patch')
        proc = self.tool('tools/prepare', env=hook)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('up to date', proc.stdout + proc.stderr)
        proc = self.tool('tools/check-series', env=hook)
        self.assertIn('ok   applies', proc.stdout)
        # the other repository was not touched
        self.assertEqual(subprocess.run(
            ['git', '-C', str(other), 'rev-list', '--all'], env=self.env,
            stdout=subprocess.PIPE, text=True).stdout, '')


class UnreadablePatchTest(ScratchRepo):
    """tools/prepare with a patch git am cannot read: git's reason, not
    "git am failed", and not git's advice on an am it has aborted."""

    def test_git_s_reason_is_named(self):
        self.prepared()
        head = self.git('rev-parse', 'HEAD')
        for text in ('', 'not a patch at all\n'):
            with self.subTest(text=text):
                (self.patches / '0001-bad.patch').write_text(text)
                (self.patches / 'series').write_text('0001-bad.patch\n')
                proc = self.tool('tools/prepare')
                self.assertEqual(proc.returncode, 1, proc.stderr)
                self.assertEqual(
                    proc.stderr.strip().splitlines()[-1],
                    'prepare: error: 0001-bad.patch does not apply (Patch '
                    'format detection failed.); the tree is back where it was')
                self.assertEqual(self.git('rev-parse', 'HEAD'), head)

    def test_a_patch_without_a_diff(self):
        self.prepared()
        (self.patches / '0001-empty.patch').write_text(
            'From: A <a@example.org>\nSubject: [PATCH] mm: nothing\n\n'
            'Why.\n---\n mm/vmscan.c | 1 +\n')
        (self.patches / 'series').write_text('0001-empty.patch\n')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn('0001-empty.patch does not apply (error: No valid patches '
                      'in input', proc.stderr)
        self.assertNotIn('git am --', proc.stderr)


if __name__ == '__main__':
    import unittest
    unittest.main()
