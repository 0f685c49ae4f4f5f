# SPDX-License-Identifier: GPL-2.0
"""The kernel tree's lock (review F2) and an interrupted git am (F9): two
tools/prepare at once, a build and a prepare at once, the lock order, Ctrl-C
in the middle of prepare's git am, the tree's hooks, and the command a
refusal names for a git am left half done."""

import os
import shutil
import signal
import subprocess
import sys
import time
from unittest import mock

from fixtures import REPO, ScratchRepo, default_sigint

sys.path.insert(0, str(REPO / 'tools' / 'lib'))
import kunitpy
import tree as ktree

# A git that, for the N-th `git am` (not --abort), touches $SLOW_MARKER and
# sleeps $SLOW_SECONDS first (N is $SLOW_AM); and a tar that does the same
# every time: so that a test can act while tools/prepare is in the middle of
# applying or extracting.
SLOW_GIT = '''#!/bin/sh
case " $* " in
*" am "*)
    case " $* " in
    *" --abort"*) ;;
    *)  n=$(cat "$SLOW_COUNT" 2>/dev/null || echo 0); n=$((n + 1))
        echo $n > "$SLOW_COUNT"
        if [ "$n" = "$SLOW_AM" ]; then
            touch "$SLOW_MARKER"; sleep "$SLOW_SECONDS"
        fi ;;
    esac ;;
esac
exec {git} "$@"
'''
SLOW_TAR = '''#!/bin/sh
touch "$SLOW_MARKER"; sleep "$SLOW_SECONDS"
exec {tar} "$@"
'''

WAITING = 'waiting for the kernel tree'


class TreeLockTest(ScratchRepo):

    def setUp(self):
        super().setUp()
        self.marker = self.tmp / 'slow-marker'
        self.procs: list[subprocess.Popen] = []
        self.addCleanup(self.reap)

    def reap(self):
        for proc in self.procs:
            if proc.poll() is None:
                proc.kill()
                proc.wait()

    def make_series(self, count=3):
        """A series of @count patches in kernel-patches/, the tree prepared
        and then put back at the base (so tools/prepare has to apply them)."""
        self.prepared()
        for i in range(count):
            line = 3 + 5 * i
            self.commit_change(line, f'change {line}', f'mm/vmscan: change {line}')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        return sorted(self.patches.glob('00[0-9][1-9]-*.patch'))

    def slow(self, program, seconds=30, am=1):
        """The environment for a tools/prepare whose git am (the @am-th) or
        tar (@program) is slow (SLOW_GIT, SLOW_TAR)."""
        bindir = self.tmp / 'slow-bin'
        bindir.mkdir(exist_ok=True)
        if program == 'git':
            text = SLOW_GIT.format(git=shutil.which('git'))
        else:
            text = SLOW_TAR.format(tar=shutil.which('tar'))
        (bindir / program).write_text(text)
        (bindir / program).chmod(0o755)
        return {'PATH': f'{bindir}:{os.environ["PATH"]}',
                'SLOW_MARKER': str(self.marker), 'SLOW_SECONDS': str(seconds),
                'SLOW_AM': str(am), 'SLOW_COUNT': str(self.tmp / 'slow-count')}

    def start(self, name, *args, env=None, new_session=False):
        """Starts repo/<name> in the background, its stdout and stderr in
        files (read with output())."""
        out = open(self.tmp / f'out-{len(self.procs)}', 'w+')
        self.addCleanup(out.close)
        proc = subprocess.Popen([str(self.repo / name), *map(str, args)],
                                cwd=self.repo, env={**self.env, **(env or {})},
                                text=True, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=new_session,
                                preexec_fn=default_sigint)
        proc.out = out      # type: ignore[attr-defined]
        self.procs.append(proc)
        return proc

    @staticmethod
    def output(proc):
        proc.out.seek(0)
        return proc.out.read()

    def wait_until_waiting(self, proc):
        """Until @proc says it waits for the tree's lock, or ends."""
        self.wait_for('the lock to be waited for',
                      lambda: WAITING in self.output(proc) or proc.poll() is not None)
        self.assertIsNone(proc.poll(), self.output(proc))

    def wait_for(self, what, predicate, timeout=60):
        deadline = time.monotonic() + timeout
        while not predicate():
            if time.monotonic() > deadline:
                self.fail(f'timed out waiting for {what}')
            time.sleep(0.05)

    def finish(self, proc, timeout=120):
        proc.wait(timeout=timeout)
        return proc.returncode, self.output(proc)

    def applied(self):
        return int(self.git('rev-list', '--count', 'kbranch/base..HEAD'))

    def assert_clean(self):
        self.assertEqual(self.git('status', '--porcelain'), '')
        self.assertFalse((self.tree / '.git' / 'rebase-apply').exists())

    # --- F2: the lock -----------------------------------------------------

    def test_two_prepares_at_once_on_an_empty_cache(self):
        """The review's traceback (tree.rmdir(): "Directory not empty"):
        the second waits while the first extracts, then finds it ready."""
        self.make_series(2)
        shutil.rmtree(self.tree)
        first = self.start('tools/prepare', env=self.slow('tar', seconds=2))
        self.wait_for('the first to extract', self.marker.exists)
        second = self.start('tools/prepare', env=self.slow('tar', seconds=2))
        for proc in (first, second):
            code, out = self.finish(proc)
            self.assertEqual(code, 0, out)
            self.assertNotIn('Traceback', out)
        out = self.output(second)
        self.assertIn(f'{WAITING} {self.tree}: prepare (pid {first.pid}) is changing it', out)
        self.assertIn('up to date', out)
        self.assertEqual(self.applied(), 2)
        self.assert_clean()

    def test_two_prepares_at_once_while_git_am_runs(self):
        """The review's false "does not apply" and index.lock: the second
        waits for the first's git am, then finds the tree up to date."""
        self.make_series(3)
        first = self.start('tools/prepare', env=self.slow('git', seconds=2, am=2))
        self.wait_for('the first to be in its second git am', self.marker.exists)
        second = self.start('tools/prepare')
        for proc in (first, second):
            code, out = self.finish(proc)
            self.assertEqual(code, 0, out)
            self.assertNotIn('Traceback', out)
            self.assertNotIn('does not apply', out)
        self.assertIn(f'{WAITING} {self.tree}: prepare (pid {first.pid}) is changing it',
                      self.output(second))
        self.assertEqual(self.applied(), 3)
        self.assert_clean()

    def test_a_build_holds_off_a_prepare_that_would_change_the_tree(self):
        """A shared holder (a build) blocks the exclusive lock: the tree
        does not change under the build; the prepare goes on after it."""
        self.make_series(2)
        with ktree.tree_lock(self.tree, 'kunit run', shared=True, log=lambda m: None):
            proc = self.start('tools/prepare')
            self.wait_until_waiting(proc)
            time.sleep(0.5)
            self.assertIsNone(proc.poll(), self.output(proc))
            self.assertEqual(self.applied(), 0)
            self.assertIn(f'{WAITING} {self.tree}: in use by kunit run (pid {os.getpid()}); '
                          f'it is changed only when no other tool builds from it',
                          self.output(proc))
        code, out = self.finish(proc)
        self.assertEqual(code, 0, out)
        self.assertEqual(self.applied(), 2)

    def test_an_up_to_date_tree_does_not_wait_for_builds(self):
        """prepare only looks at a tree at base + series (shared), so it does
        not wait for the builds from it; nor do builds wait for each other."""
        self.make_series(1)
        self.prepared()
        self.install_fake_kunit()
        with ktree.tree_lock(self.tree, 'kunit run', shared=True, log=lambda m: None):
            proc = self.tool('tools/prepare')
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertIn('up to date', proc.stdout)
            self.assertNotIn(WAITING, proc.stderr)
            proc = self.tool('tools/kunit', 'build', '--no-setup')
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertNotIn(WAITING, proc.stderr)

    def test_a_build_waits_while_the_tree_is_changed(self):
        """An exclusive holder (prepare, export) blocks the builders."""
        self.prepared()
        self.install_fake_kunit()
        calls = self.tmp / 'build' / 'default' / 'calls'
        builders = [('tools/kunit', 'build', '--no-setup'), ('tools/run-suites',)]
        with ktree.tree_lock(self.tree, 'prepare', log=lambda m: None):
            proc = self.start(*builders[0])
            self.wait_until_waiting(proc)
            self.assertIn(f'{WAITING} {self.tree}: prepare (pid {os.getpid()}) is '
                          f'changing it', self.output(proc))
            self.assertFalse(calls.exists())
        code, out = self.finish(proc)
        self.assertEqual(code, 0, out)
        self.assertTrue(calls.exists())
        calls.unlink()
        with ktree.tree_lock(self.tree, 'export', log=lambda m: None):
            proc = self.start(*builders[1])
            self.wait_until_waiting(proc)
            self.assertIn('export (pid', self.output(proc))
            self.assertFalse(calls.exists())
        self.finish(proc)
        self.assertTrue(calls.exists())

    def test_export_waits_for_a_build(self):
        self.make_series(1)
        self.prepared()
        with ktree.tree_lock(self.tree, 'run-suites', shared=True, log=lambda m: None):
            proc = self.start('tools/export')
            self.wait_until_waiting(proc)
            self.assertIn('in use by run-suites (pid', self.output(proc))
        code, out = self.finish(proc)
        self.assertEqual(code, 0, out)

    def test_the_build_directory_is_taken_before_the_tree(self):
        """A tools/kunit or tools/e2e build refused its build directory
        (exit 4) has not prepared the tree: prepare comes after."""
        self.make_series(1)
        self.install_fake_kunit()
        head = self.git('rev-parse', 'HEAD')
        for build, cmd in (('default', ('tools/kunit', 'run', '--no-setup')),
                           ('e2e', ('tools/e2e', 'build', '--no-setup'))):
            with kunitpy.build_lock(self.tmp / 'build' / build, 'another kunit run'):
                proc = self.tool(*cmd)
                self.assertEqual(proc.returncode, 4, proc.stderr)
                self.assertIn('in use by another kunit run', proc.stderr)
                self.assertNotIn('applied', proc.stderr)
                self.assertEqual(self.git('rev-parse', 'HEAD'), head, cmd)

    def test_the_lock_is_beside_the_tree_and_counted_in_one_process(self):
        self.prepared()
        lock = ktree.lock_file(self.tree)
        self.assertEqual(lock, self.tree.resolve().parent / '.linux.kbranch-lock')
        link = self.tmp / 'link'
        link.symlink_to(self.tree)
        self.assertEqual(ktree.lock_file(link), lock)
        quiet = lambda m: None      # noqa: E731
        with ktree.tree_lock(self.tree, 'outer', log=quiet):
            self.assertIn('outer (pid', lock.read_text())
            # taken again (apply_series() under prepare()): counted
            with ktree.tree_lock(self.tree, 'inner', shared=True, log=quiet):
                pass
            self.assertIn('outer (pid', lock.read_text())
        self.assertEqual(lock.read_text(), '')
        # an exclusive lock under a shared one would wait for itself
        with ktree.tree_lock(self.tree, 'a build', shared=True, log=quiet):
            with self.assertRaises(RuntimeError):
                ktree.hold_tree(self.tree, 'prepare', log=quiet)
        # nothing left held: another process takes it at once
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)

    # --- F9: an interrupted git am ----------------------------------------

    def test_ctrl_c_in_git_am_puts_the_tree_back(self):
        """SIGINT to the process group (a terminal's Ctrl-C) while git am
        runs: the am is aborted, the tree back where it was, and the next
        prepare applies the series."""
        self.make_series(3)
        head = self.git('rev-parse', 'HEAD')
        proc = self.start('tools/prepare', env=self.slow('git', am=2), new_session=True)
        self.wait_for('the second git am', self.marker.exists)
        os.killpg(proc.pid, signal.SIGINT)
        code, out = self.finish(proc)
        self.assertEqual(code, 130, out)
        self.assertIn('interrupted: the git am was aborted', out)
        self.assertNotIn('Traceback', out)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assert_clean()
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.applied(), 3)

    def test_an_interrupt_with_the_am_half_done_aborts_it(self):
        """KeyboardInterrupt where git am stopped half way (its
        .git/rebase-apply left): apply_series() aborts the am, resets the
        tree and raises it again."""
        patches = self.make_series(3)
        head = self.git('rev-parse', 'HEAD')
        conflict = self.tmp / 'conflict.patch'
        conflict.write_text(patches[0].read_text().replace('-line 3', '-no such line'))
        real_run = subprocess.run
        ams = []

        def run(cmd, *args, **kwargs):
            if 'am' in cmd and '--abort' not in cmd:
                ams.append(cmd)
                if len(ams) == 2:
                    # git am stopped in the middle, then Ctrl-C
                    real_run(['git', '-C', str(self.tree), 'am', str(conflict)],
                             env=self.env, capture_output=True)
                    self.assertTrue((self.tree / '.git' / 'rebase-apply').exists())
                    raise KeyboardInterrupt
            return real_run(cmd, *args, **kwargs)

        with mock.patch.dict(os.environ, self.env), \
                mock.patch.object(ktree.subprocess, 'run', side_effect=run):
            with self.assertRaises(KeyboardInterrupt):
                ktree.apply_series(self.tree, patches, log=lambda m: None)
        self.assertEqual(len(ams), 2)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assert_clean()
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.applied(), 3)

    def test_the_tree_s_hooks_do_not_run(self):
        """A developer's applypatch-msg hook (a checkpatch, say) that
        refuses the message does not make a patch "not apply": git am runs
        without the tree's hooks (git am --no-verify, which bookworm's git
        2.39 does not have, skips only two of them)."""
        self.make_series(2)
        hooks = self.tree / '.git' / 'hooks'
        ran = self.tmp / 'hook-ran'
        for hook, text in (('applypatch-msg', 'exit 1'), ('pre-applypatch', 'exit 1'),
                           ('post-applypatch', f'touch {ran}')):
            (hooks / hook).write_text(f'#!/bin/sh\n{text}\n')
            (hooks / hook).chmod(0o755)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.applied(), 2)
        self.assertFalse(ran.exists())

    def test_a_git_am_left_half_done_is_refused_naming_the_command(self):
        patches = self.make_series(1)
        bad = self.tmp / 'bad.patch'
        bad.write_text(patches[0].read_text().replace('-line 3', '-no such line'))
        subprocess.run(['git', '-C', str(self.tree), 'am', str(bad)], env=self.env,
                       capture_output=True)
        self.assertTrue((self.tree / '.git' / 'rebase-apply').exists())
        for tool in ('tools/prepare', 'tools/export'):
            proc = self.tool(tool)
            self.assertEqual(proc.returncode, 4, proc.stderr)
            self.assertIn('has a git am or rebase in progress: finish it', proc.stderr)
            self.assertIn(f'abort it with `git -C {self.tree} am --abort`', proc.stderr)
        subprocess.run(['git', '-C', str(self.tree), 'am', '--abort'], env=self.env,
                       check=True)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.applied(), 1)

    def test_the_abort_command_of_each_operation(self):
        self.prepared()
        gitdir = self.tree / '.git'
        (gitdir / 'MERGE_HEAD').write_text('0' * 40 + '\n')
        self.assertTrue(ktree.abort_command(self.tree).endswith(' merge --abort'))
        (gitdir / 'MERGE_HEAD').unlink()
        (gitdir / 'CHERRY_PICK_HEAD').write_text('0' * 40 + '\n')
        self.assertTrue(ktree.abort_command(self.tree).endswith(' cherry-pick --abort'))
        (gitdir / 'CHERRY_PICK_HEAD').unlink()
        (gitdir / 'rebase-merge').mkdir()
        self.assertTrue(ktree.abort_command(self.tree).endswith(' rebase --abort'))
        (gitdir / 'rebase-merge').rmdir()
        (gitdir / 'rebase-apply').mkdir()       # git rebase's apply backend
        self.assertEqual(ktree.abort_command(self.tree),
                         f'git -C {self.tree} rebase --abort')
        (gitdir / 'rebase-apply' / 'applying').write_text('')     # git am's
        self.assertEqual(ktree.abort_command(self.tree),
                         f'git -C {self.tree} am --abort')
        spaced = self.tmp / 'a tree'
        os.rename(self.tree, spaced)
        self.assertEqual(ktree.abort_command(spaced),
                         f"git -C '{spaced}' am --abort")
