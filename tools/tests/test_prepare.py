# SPDX-License-Identifier: GPL-2.0
"""tools/prepare: creating the tree, applying the series, refusing to touch
work, --force, and version mismatches."""

import hashlib
import shutil
import subprocess
import unittest

from fixtures import ScratchRepo, make_tarball, snapshot


class PrepareTest(ScratchRepo):

    def add_patches(self, *changes):
        """Makes a series out of changes committed in a scratch tree."""
        self.prepared()
        for line_no, text, subject in changes:
            self.commit_change(line_no, text, subject)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.git('reset', '-q', '--hard', 'kbranch/base')

    def test_fresh_tree_is_base_with_empty_series(self):
        proc = self.prepared()
        self.assertIn('+ 0 patch(es)', proc.stdout)
        self.assertEqual(self.git('rev-parse', 'HEAD'),
                         self.git('rev-parse', 'kbranch/base'))
        # One base commit, the root of the history, that says what it changed
        self.assertEqual(self.git('rev-list', '--count', 'HEAD'), '1')
        self.assertEqual(self.git('log', '-1', '--format=%s', 'kbranch/base'),
                         'linux-source-6.12 6.12.118')
        self.assertIn('.gitignore', self.git('log', '-1', '--format=%b', 'kbranch/base'))
        self.assertNotIn('/*', (self.tree / '.gitignore').read_text())
        (self.tree / 'mm' / 'new.c').write_text('x\n')
        self.assertIn('mm/new.c', self.git('status', '--porcelain'))

    def test_base_commits_are_the_same_everywhere(self):
        self.prepared()
        first = self.git('rev-parse', 'kbranch/base')
        shutil.rmtree(self.tree)
        self.prepared()
        self.assertEqual(self.git('rev-parse', 'kbranch/base'), first)

    def test_series_is_applied_and_second_run_changes_nothing(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (7, 'seven', 'mm/vmscan: change seven'))
        proc = self.prepared()
        self.assertIn('2 newly applied', proc.stdout)
        self.assertEqual(self.git('log', '--format=%s', 'kbranch/base..'),
                         'mm/vmscan: change seven\nmm/vmscan: change three')
        head = self.git('rev-parse', 'HEAD')
        before = snapshot(self.tree)
        proc = self.prepared()
        self.assertIn('up to date', proc.stdout)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assertEqual(snapshot(self.tree), before)

    def test_patches_added_to_the_series_are_applied(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'))
        self.prepared()
        self.commit_change(9, 'nine', 'mm/vmscan: change nine')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.git('reset', '-q', '--hard', 'HEAD~1')
        proc = self.prepared()
        self.assertIn('1 newly applied', proc.stdout)

    def test_patch_that_does_not_apply_is_named_and_tree_restored(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (3, 'three again', 'mm/vmscan: change three again'))
        # Make the second patch's context wrong
        (self.patches / 'series').write_text(
            '0002-mm-vmscan-change-three-again.patch\n'
            '0001-mm-vmscan-change-three.patch\n')
        head = self.git('rev-parse', 'HEAD')
        before = snapshot(self.tree, with_git=False)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 1, proc.stderr)
        self.assertIn('0002-mm-vmscan-change-three-again.patch does not apply',
                      proc.stderr)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assertEqual(self.git('status', '--porcelain'), '')
        self.assertFalse((self.tree / '.git' / 'rebase-apply').exists())
        self.assertEqual(snapshot(self.tree, with_git=False), before)

    def test_failing_patch_after_good_ones_leaves_tree_where_it_was(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'))
        bad = self.patches / '0002-bad.patch'
        bad.write_text((self.patches / '0001-mm-vmscan-change-three.patch')
                       .read_text().replace('-line 3', '-no such line'))
        (self.patches / 'series').write_text(
            '0001-mm-vmscan-change-three.patch\n0002-bad.patch\n')
        head = self.git('rev-parse', 'HEAD')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 1)
        self.assertIn('0002-bad.patch does not apply', proc.stderr)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assertEqual(self.git('status', '--porcelain'), '')

    def test_dirty_tree_is_left_byte_for_byte(self):
        self.prepared()
        (self.tree / 'mm' / 'vmscan.c').write_text('my work\n')
        (self.tree / 'mm' / 'new.c').write_text('new work\n')
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn('uncommitted changes', proc.stderr)
        self.assertIn('mm/vmscan.c', proc.stderr)
        self.assertIn('Nothing was touched', proc.stderr)
        self.assertEqual(snapshot(self.tree), before)
        # the run tool refuses the same way
        proc = self.tool('tools/kunit', 'run', '--no-setup')
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertEqual(snapshot(self.tree), before)

    def test_a_reworded_patch_replaces_the_one_prepare_applied(self):
        # machine A: a series of two, applied by tools/prepare
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.commit_change(8, 'eight', 'mm/vmscan: change eight')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        self.prepared()
        applied_v1 = self.git('rev-parse', 'HEAD')
        # upstream rewords the second patch (the series is pulled)
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight, reworded\n\nWhy, and how it was '
                 'tested.\n\nSigned-off-by: Test Author <author@example.org>')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        # a tree that still holds the series as prepare applied it
        self.git('reset', '-q', '--hard', applied_v1)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('replacing 1 commit(s) of an earlier series', proc.stdout + proc.stderr)
        self.assertEqual(self.git('log', '-1', '--format=%s'),
                         'mm/vmscan: change eight, reworded')
        self.assertEqual(self.git('rev-list', '--count', 'kbranch/base..HEAD'), '2')

    def test_a_developer_s_own_export_is_replaced_after_a_pull(self):
        # the developer commits a series of three and exports it: prepare
        # finds it up to date (and records it, though it applied nothing)
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.commit_change(5, 'five', 'mm/vmscan: change five')
        self.commit_change(8, 'eight', 'mm/vmscan: change eight')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertIn('up to date', self.prepared().stdout)
        mine = self.git('rev-parse', 'HEAD')
        # a pull rewords the first patch; the other two stay byte for byte
        self.git('reset', '-q', '--hard', 'HEAD~2')
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change three, reworded\n\nWhy, and how it was '
                 'tested.\n\nSigned-off-by: Test Author <author@example.org>')
        self.git('cherry-pick', f'{mine}~1', mine)
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.stdout.splitlines()[1:], [     # no cover letter
            f'wrote {self.patches / "0001-mm-vmscan-change-three-reworded.patch"}',
            'wrote ' + str(self.patches / 'series'),
            f'removed {self.patches / "0001-mm-vmscan-change-three.patch"}'])
        self.assertNotEqual(snapshot(self.patches), before)
        # the developer had reworded the last commit, not exported: that
        # one is work, and the only commit named
        self.git('reset', '-q', '--hard', mine)
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight\n\nMy own better changelog.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn(f'1 commit(s) that are not in kernel-patches/ '
                      f'({self.git("rev-parse", "--short", "HEAD")} '
                      f'mm/vmscan: change eight)', proc.stderr)
        self.assertNotIn('change three', proc.stderr)
        self.assertNotIn('change five', proc.stderr)
        self.assertEqual(snapshot(self.tree), before)
        # without it, the tree is the developer's export: replaced
        self.git('reset', '-q', '--hard', mine)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('replacing 3 commit(s) of an earlier series', proc.stderr)
        self.assertEqual(self.git('log', '--format=%s', 'kbranch/base..HEAD'),
                         'mm/vmscan: change eight\nmm/vmscan: change five\n'
                         'mm/vmscan: change three, reworded')

    def test_a_commit_that_is_a_patch_of_the_series_is_not_work(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (8, 'eight', 'mm/vmscan: change eight'))
        self.prepared()
        (self.tree / '.git' / 'kbranch-applied').unlink()     # no record
        # the first reworded, not exported: work; the second is the
        # series' own second patch
        eight = self.git('rev-parse', 'HEAD')
        self.git('reset', '-q', '--hard', 'HEAD~1')
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change three\n\nMy own better changelog.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        self.git('cherry-pick', eight)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn(f'1 commit(s) that are not in kernel-patches/ '
                      f'({self.git("rev-parse", "--short", "HEAD~1")} '
                      f'mm/vmscan: change three)', proc.stderr)
        self.assertNotIn('change eight', proc.stderr)
        # the second alone, out of place: a patch of the series, replaced
        self.git('reset', '-q', '--hard', 'kbranch/base')
        self.git('cherry-pick', eight)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('replacing 1 commit(s)', proc.stderr)
        self.assertEqual(self.git('log', '--format=%s', 'kbranch/base..HEAD'),
                         'mm/vmscan: change eight\nmm/vmscan: change three')

    def test_a_patch_formatted_otherwise_is_the_same_patch(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (8, 'eight', 'mm/vmscan: change eight'))
        self.prepared()
        head = self.git('rev-parse', 'HEAD')
        # the same commits as another git format-patch would write them:
        # numbered, another prefix, 7-digit index lines, a To: header,
        # a diffstat of another width, a signature, and notes
        self.git('notes', '--ref=kbranch', 'add', '-f', '-m', 'a note', 'HEAD')
        out = self.tmp / 'other'
        self.git('format-patch', '-q', '--numbered', '--subject-prefix=RFC PATCH',
                 '--abbrev=7', '--to=someone@example.org', '--stat=40',
                 '--signature=2.99.0', '--notes=kbranch', '-o', str(out),
                 'kbranch/base..HEAD')
        for mine, theirs in zip(sorted(self.patches.glob('0*.patch')),
                                sorted(out.glob('*.patch'))):
            self.assertNotEqual(mine.read_bytes(), theirs.read_bytes())
            mine.write_bytes(theirs.read_bytes())
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('up to date', proc.stdout)
        self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        self.assertEqual(snapshot(self.tree), before)

    def test_a_commit_the_user_reworded_is_work(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'))
        self.prepared()
        # the same diff, another changelog: not what prepare applied
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change three\n\nMy own better changelog.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn('1 commit(s) that are not in kernel-patches/ ',
                      proc.stderr)
        self.assertEqual(snapshot(self.tree), before)

    def test_what_prepare_applied_is_recorded_by_patch_id_and_message(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (8, 'eight', 'mm/vmscan: change eight'))
        self.prepared()
        lines = (self.tree / '.git' / 'kbranch-applied').read_text().splitlines()
        self.assertEqual(len(lines), 2)
        for line, commit in zip(lines, ('HEAD~1', 'HEAD')):
            patch_id = subprocess.run(
                ['git', '-C', str(self.tree), 'patch-id', '--stable'],
                input=self.git('show', commit) + '\n', env=self.env,
                text=True, stdout=subprocess.PIPE, check=True).stdout.split()[0]
            self.assertRegex(line, r'^[0-9a-f]{40} [0-9a-f]{64}$')
            self.assertEqual(line.split()[0], patch_id)

    def test_an_older_prepare_s_record_is_still_read(self):
        # machine A: a series of two, applied by an older tools/prepare,
        # which recorded the sha256 of each patch file
        self.add_patches((3, 'three', 'mm/vmscan: change three'),
                         (8, 'eight', 'mm/vmscan: change eight'))
        self.prepared()
        (self.tree / '.git' / 'kbranch-applied').write_text(''.join(
            hashlib.sha256(p.read_bytes()).hexdigest() + '\n'
            for p in sorted(self.patches.glob('0*.patch'))))
        applied_v1 = self.git('rev-parse', 'HEAD')
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight, reworded\n\nWhy.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.git('reset', '-q', '--hard', applied_v1)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertIn('replacing 1 commit(s) of an earlier series',
                      proc.stderr)
        self.assertEqual(self.git('log', '-1', '--format=%s'),
                         'mm/vmscan: change eight, reworded')

    def test_the_cover_letter_is_not_applied(self):
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        (self.patches / 'cover-letter.txt').write_text(
            'The series\n\nWhat it does.\n')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertTrue((self.patches / '0000-cover-letter.patch').is_file())
        self.git('reset', '-q', '--hard', 'kbranch/base')
        proc = self.prepared()
        self.assertIn('+ 1 patch(es) (1 newly applied)', proc.stdout)
        self.assertEqual(self.git('rev-list', '--count', 'kbranch/base..'), '1')
        # and it is never a line of the series
        (self.patches / 'series').write_text(
            '0000-cover-letter.patch\n0001-mm-vmscan-change-three.patch\n')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("series:1: '0000-cover-letter.patch' is not a patch",
                      proc.stderr)

    def test_unexported_commit_is_refused(self):
        self.prepared()
        self.commit_change(5, 'five', 'mm/vmscan: not exported')
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4)
        self.assertIn('1 commit(s) that are not in kernel-patches/', proc.stderr)
        self.assertIn('mm/vmscan: not exported', proc.stderr)
        self.assertEqual(snapshot(self.tree), before)

    def test_a_branch_without_commits_is_refused(self):
        self.prepared()
        self.git('switch', '-q', '--orphan', 'elsewhere')
        before = snapshot(self.tree)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn('HEAD is not based on kbranch/base', proc.stderr)
        self.assertEqual(snapshot(self.tree), before)

    def test_force_saves_the_work_then_resets(self):
        self.add_patches((3, 'three', 'mm/vmscan: change three'))
        self.prepared()
        self.commit_change(5, 'five', 'mm/vmscan: not exported')
        (self.tree / 'mm' / 'vmscan.c').write_text('uncommitted\n')
        proc = self.tool('tools/prepare', '--force')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('stash@{0}', proc.stderr)
        self.assertIn('kbranch/backup/', proc.stderr)
        self.assertEqual(self.git('log', '--format=%s', 'kbranch/base..'),
                         'mm/vmscan: change three')
        backup = self.git('branch', '--list', 'kbranch/backup/*').strip()
        self.assertEqual(self.git('log', '-1', '--format=%s', backup),
                         'mm/vmscan: not exported')
        self.assertEqual(self.git('show', 'stash@{0}:mm/vmscan.c'),
                         'uncommitted')

    def test_missing_tarball(self):
        self.tarball.unlink()
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 3)
        self.assertIn('not found', proc.stderr)
        self.assertIn('tools/setup', proc.stderr)
        self.assertFalse(self.tree.exists())

    def test_different_sublevel_is_refused(self):
        """T1: a tarball of another version than BASE names is refused,
        exit 3, and no tree is made (it would be called 6.12.118)."""
        make_tarball(self.tarball, sublevel=119)
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('BASE names kernel 6.12.118', proc.stderr)
        self.assertIn('holds 6.12.119: nothing was prepared', proc.stderr)
        self.assertFalse(self.tree.exists())
        # nor its temporary directory (the tree's lock file stays)
        self.assertEqual([p.name for p in self.tree.parent.iterdir()
                          if p.name.startswith(f'.{self.tree.name}.tmp')], [])

    def test_tree_from_another_base_is_refused(self):
        self.prepared()
        before = snapshot(self.tree)
        self.write_base(version='6.12.120')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 4)
        self.assertIn('prepared from linux-source-6.12 6.12.118', proc.stderr)
        self.assertEqual(snapshot(self.tree), before)

    def test_a_base_bump_with_force_moves_the_old_tree_aside(self):
        """T2: on a machine that keeps its tree, --force prepares the new
        base and keeps the old tree whole beside it."""
        self.prepared()
        (self.tree / 'mm' / 'vmscan.c').write_text('uncommitted')
        before = snapshot(self.tree)
        self.write_base(version='6.12.120')
        make_tarball(self.tarball, sublevel=120)
        proc = self.tool('tools/prepare', '--force')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        aside = [p for p in self.tree.parent.iterdir()
                 if p.name.startswith(f'{self.tree.name}.6.12.118.')]
        self.assertEqual(len(aside), 1, list(self.tree.parent.iterdir()))
        self.assertIn(f'moved it to {aside[0]}', proc.stderr)
        self.assertEqual(snapshot(aside[0]), before)
        self.assertEqual(self.git('config', 'kbranch.version').strip(), '6.12.120')
        self.assertIn('SUBLEVEL = 120', (self.tree / 'Makefile').read_text())

    def test_foreign_directory_is_refused(self):
        self.tree.mkdir(parents=True)
        (self.tree / 'precious').write_text('mine\n')
        proc = self.tool('tools/prepare', '--force')
        self.assertEqual(proc.returncode, 4)
        self.assertIn('not prepared by tools/prepare', proc.stderr)
        self.assertEqual((self.tree / 'precious').read_text(), 'mine\n')

    def test_bad_base_file(self):
        (self.patches / 'BASE').write_text('PACKAGE=linux-source-6.12\n')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 2)
        self.assertIn('missing VERSION, DEBIAN_VERSION', proc.stderr)

    def test_a_key_given_twice_in_base_is_named(self):
        self.write_base()
        with open(self.patches / 'BASE', 'a') as f:
            f.write('VERSION=6.12.119\n')
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 2)
        self.assertIn("BASE:4: VERSION is given twice ('6.12.118', then '6.12.119')",
                      proc.stderr)
        self.assertFalse(self.tree.exists(), 'nothing was prepared')


if __name__ == '__main__':
    unittest.main()
