# SPDX-License-Identifier: GPL-2.0
"""tools/export: stable files, no diff on re-export, round trip through
tools/prepare, and refusing to export half the work."""

import os
import subprocess
import unittest

from fixtures import ScratchRepo, snapshot


class ExportTest(ScratchRepo):

    def setUp(self):
        super().setUp()
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.commit_change(8, 'eight', 'mm/vmscan: change eight')

    def test_export_writes_numbered_patches_and_series(self):
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((self.patches / 'series').read_text().splitlines()[-2:],
                         ['0001-mm-vmscan-change-three.patch',
                          '0002-mm-vmscan-change-eight.patch'])
        text = (self.patches / '0001-mm-vmscan-change-three.patch').read_text()
        self.assertTrue(text.startswith('From 0000000000000000000000000000000000000000 '))
        self.assertIn('Subject: [PATCH] mm/vmscan: change three', text)
        self.assertNotIn('\n-- \n', text)       # --no-signature

    def test_reexport_without_changes_changes_nothing(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0)
        self.assertIn('up to date', proc.stdout)
        self.assertEqual(snapshot(self.patches), before)

    def test_round_trip_through_prepare_gives_the_same_bytes(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        self.prepared()                 # git am of the exported series
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertEqual(snapshot(self.patches), before)

    def test_notes_go_below_the_line_and_come_back_with_prepare(self):
        self.git('notes', '--ref=kbranch', 'add', '-m',
                 'checkpatch: FILE_PATH_CHANGES a reason\non two lines', 'HEAD')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        text = (self.patches / '0002-mm-vmscan-change-eight.patch').read_text()
        below = text.split('\n---\n', 1)[1]
        self.assertIn('Notes (kbranch):\n    checkpatch: FILE_PATH_CHANGES a reason\n'
                      '    on two lines\n', below)
        self.assertNotIn('checkpatch:', text.split('\n---\n', 1)[0])
        before = snapshot(self.patches)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        self.prepared()                 # git am, then the notes again
        note = self.git('notes', '--ref=kbranch', 'show', 'HEAD')
        self.assertEqual(note, 'checkpatch: FILE_PATH_CHANGES a reason\non two lines')
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight\n\nReworded.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        self.assertIn('FILE_PATH_CHANGES',
                      self.git('notes', '--ref=kbranch', 'show', 'HEAD'),
                      'an amend must carry the note (notes.rewriteRef)')
        self.git('reset', '-q', '--hard', 'HEAD@{1}')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertEqual(snapshot(self.patches), before)

    def test_a_hostile_gitconfig_changes_nothing(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        self.prepared()
        head = self.git('rev-parse', 'HEAD')   # the commits prepare makes
        hooks = self.tmp / 'hooks'
        hooks.mkdir()
        for hook in ('applypatch-msg', 'pre-applypatch', 'post-applypatch',
                     'pre-commit', 'commit-msg', 'post-commit', 'post-checkout'):
            (hooks / hook).write_text(f'#!/bin/sh\necho {hook} >> {self.tmp}/hooks.ran\n'
                                      f'exit 1\n')
            (hooks / hook).chmod(0o755)
        # in the test's own HOME, where git looks first
        (self.home / '.gitconfig').write_text(
            '[format]\n\tsubjectPrefix = RFC PATCH\n\tsignOff = true\n'
            '\tnumbered = true\n\tto = someone@example.org\n'
            '\tcoverLetter = true\n\tthread = shallow\n\tsignature = hi\n'
            '\theaders = "X-Hostile: yes\\n"\n\tsuffix = .diff\n'
            '\tuseAutoBase = true\n\tfrom = Someone Else <else@example.org>\n'
            '[diff]\n\talgorithm = histogram\n\tnoprefix = true\n'
            '\tmnemonicPrefix = true\n\tcontext = 1\n'
            f'[core]\n\tabbrev = 7\n\thooksPath = {hooks}\n'
            '[notes]\n\tdisplayRef = refs/notes/kbranch\n'
            '[am]\n\tthreeWay = true\n\tmessageId = true\n'
            '[commit]\n\tgpgSign = true\n[gpg]\n\tprogram = false\n'
            f'[init]\n\ttemplateDir = {self.tmp}/no-such-template\n'
            '[user]\n\tname = Someone Else\n\temail = else@example.org\n')
        for _ in range(2):
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(snapshot(self.patches), before)
            subprocess.run(['git', '-C', str(self.tree), 'reset', '-q', '--hard',
                            'kbranch/base'], check=True,
                           env={**self.env, 'GIT_CONFIG_GLOBAL': os.devnull})
            proc = self.tool('tools/prepare')
            self.assertEqual(proc.returncode, 0, proc.stderr)
            self.assertEqual(self.git('rev-parse', 'HEAD'), head)
        proc = self.tool('tools/prepare')     # its own tree
        self.assertEqual(proc.returncode, 0, proc.stderr)
        other = self.tmp / 'other'             # a tree made from the tarball
        proc = self.tool('tools/prepare', env={'RECLAIM_TREE': str(other)})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.git('rev-parse', 'HEAD', cwd=other), head)
        self.assertFalse((self.tmp / 'hooks.ran').exists())

    def test_dropped_commit_removes_its_patch(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.git('reset', '-q', '--hard', 'HEAD~1')
        proc = self.tool('tools/export')
        self.assertIn('removed', proc.stdout)
        self.assertEqual(sorted(p.name for p in self.patches.glob('*.patch')),
                         ['0001-mm-vmscan-change-three.patch'])

    def test_files_it_did_not_write_are_never_removed(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        mine = self.patches / '0001-someone-elses.patch'
        mine.write_text('not written by tools/export\n')
        other = self.repo / 'elsewhere'
        other.mkdir()
        (other / 'keep.patch').write_text('a patch of the user\n')
        self.git('reset', '-q', '--hard', 'HEAD~1')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('removed', proc.stdout)
        self.assertTrue(mine.is_file())
        self.assertFalse((self.patches / '0002-mm-vmscan-change-eight.patch').exists())
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual((other / 'keep.patch').read_text(), 'a patch of the user\n')
        self.assertTrue((other / '0001-mm-vmscan-change-three.patch').is_file())

    def test_uncommitted_changes_are_not_exported_half(self):
        (self.tree / 'mm' / 'vmscan.c').write_text('half done\n')
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 1)
        self.assertIn('uncommitted changes', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)

    def test_no_tree(self):
        proc = self.tool('tools/export', env={'RECLAIM_TREE': str(self.tmp / 'none')})
        self.assertEqual(proc.returncode, 3)
        self.assertIn('run tools/prepare first', proc.stderr)


if __name__ == '__main__':
    unittest.main()
