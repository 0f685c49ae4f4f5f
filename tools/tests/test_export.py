# SPDX-License-Identifier: GPL-2.0
"""tools/export: stable files, no diff on re-export, round trip through
tools/prepare, the cover letter, and refusing to export half the work."""

import os
import shutil
import signal
import subprocess
import unittest

from fixtures import ScratchRepo, load_tool, snapshot

COVER = 'Reclaim: tests for the isolation throttle'
COVER_TEXT = (f'{COVER}\n\nThe problem, the design\nand the numbers.\n\n'
              'Second paragraph.\n')
POSTING_COVER = 'mm/vmscan: the two ends of the file'


def elsewhere(tmp):
    """The environment of another machine and user: another TZ, HOME (made
    under tmp), locale, committer and author identity and date."""
    home = tmp / 'elsewhere'
    home.mkdir()
    return {'TZ': 'Pacific/Chatham', 'HOME': str(home), 'LANG': 'de_DE.UTF-8',
            'GIT_COMMITTER_NAME': 'Someone Else',
            'GIT_COMMITTER_EMAIL': 'else@example.org',
            'GIT_COMMITTER_DATE': '2031-02-03T04:05:06+0700',
            'GIT_AUTHOR_NAME': 'Someone Else',
            'GIT_AUTHOR_DATE': '2031-02-03T04:05:06+0700'}


def two_changes(case):
    """The tree prepared, two commits above the base (lines 3 and 8 of
    mm/vmscan.c), the series' cover text; returns its letter's path."""
    case.prepared()
    case.commit_change(3, 'three', 'mm/vmscan: change three')
    case.commit_change(8, 'eight', 'mm/vmscan: change eight')
    (case.patches / 'cover-letter.txt').write_text(COVER_TEXT)
    return case.patches / '0000-cover-letter.patch'


class ExportTest(ScratchRepo):

    HEADER_LINES = ('# Patches applied in order by tools/prepare (git am).\n'
                    '# Written by tools/export: edit the kernel tree, not '
                    'these files.\n')

    def setUp(self):
        super().setUp()
        self.cover = two_changes(self)

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
                         ['0000-cover-letter.patch',
                          '0001-mm-vmscan-change-three.patch'])

    def test_a_patch_the_tree_never_had_is_not_removed(self):
        """F1: a series pulled into kernel-patches/ after the tree was
        prepared: export would drop the new patch and revert the reworded
        one; it refuses (exit 4), names them and writes nothing."""
        self.assertEqual(self.tool('tools/export').returncode, 0)
        # a collaborator's fourth patch, pulled: the tree never had it
        self.commit_change(5, 'five', 'mm/vmscan: a collaborator\'s patch')
        pulled = self.git('format-patch', '-q', '--zero-commit', '--no-signature',
                          '-N', '--start-number', '3', '-1', '-o', str(self.tmp / 'pull'))
        self.git('reset', '-q', '--hard', 'HEAD~1')
        src = next((self.tmp / 'pull').glob('*.patch'))
        (self.patches / src.name).write_text(src.read_text())
        with open(self.patches / 'series', 'a') as f:
            f.write(src.name + '\n')
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn(src.name, proc.stderr)
        self.assertIn('never had', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        self.assertEqual(pulled, '')
        # a pulled rewording of a patch the tree has: the same name
        (self.patches / src.name).unlink()
        (self.patches / 'series').write_text(
            (self.patches / 'series').read_text().replace(src.name + '\n', ''))
        two = self.patches / '0002-mm-vmscan-change-eight.patch'
        two.write_text(two.read_text().replace(
            'change eight\n', 'change eight\n\nReworded upstream.\n', 1))
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 4, proc.stdout + proc.stderr)
        self.assertIn(two.name, proc.stderr)

    def test_an_edited_commit_replaces_the_patch_it_exported(self):
        """The patches export wrote are recorded: editing a commit and
        exporting again is no loss, and is not refused."""
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight\n\nReworded here.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('Reworded here.', (self.patches / '0002-mm-vmscan-change-eight.patch').read_text())

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

    def test_a_series_it_did_not_write_is_not_overwritten(self):
        other = self.tmp / 'outgoing'
        other.mkdir()
        theirs = other / 'series'
        for text in ('# my own series\nmine.patch\n',
                     'mine.patch\n' + self.HEADER_LINES):
            theirs.write_text(text)
            proc = self.tool('tools/export', '--patch-dir', other)
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(f'{theirs} was not written by tools/export',
                          proc.stderr)
            self.assertIn('nothing was written', proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            self.assertEqual(sorted(p.name for p in other.iterdir()),
                             ['series'], 'nothing was written')
            self.assertEqual(theirs.read_text(), text)
        theirs.write_text('\n')    # empty: nothing to lose
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(theirs.read_text().startswith(self.HEADER_LINES))
        # the repository's own series has the header
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.commit_change(9, 'nine', 'mm/vmscan: change nine')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('0003-mm-vmscan-change-nine.patch',
                      (self.patches / 'series').read_text())

    def test_a_patch_it_did_not_write_is_not_overwritten(self):
        other = self.tmp / 'outgoing'
        other.mkdir()
        theirs = other / '0002-mm-vmscan-change-eight.patch'
        theirs.write_text('a patch of the user\n')
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{other} holds 0002-mm-vmscan-change-eight.patch, which '
                      f'tools/export did not write', proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertEqual(sorted(p.name for p in other.iterdir()),
                         [theirs.name], 'nothing was written')
        self.assertEqual(theirs.read_text(), 'a patch of the user\n')
        # the same bytes as export's: nothing to overwrite
        theirs.unlink()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (self.patches / theirs.name).rename(theirs)
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        # one its own series lists is its own: rewritten
        self.git('commit', '-q', '--amend', '-m', 'mm/vmscan: change eight\n\n'
                 'Reworded.\n\nSigned-off-by: Test Author <author@example.org>')
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('\nReworded.\n', theirs.read_text())

    def test_uncommitted_changes_are_not_exported_half(self):
        (self.tree / 'mm' / 'vmscan.c').write_text('half done\n')
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 4, 'refused: the tree holds work')
        self.assertIn('uncommitted changes', proc.stderr)
        self.assertIn('nothing was written', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        proc = self.tool('tools/export', '--allow-dirty')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('0002-mm-vmscan-change-eight.patch', proc.stdout)

    def test_an_operation_in_progress_is_refused(self):
        # a cherry-pick that stops on a conflict
        self.git('checkout', '-q', '-b', 'side', 'kbranch/base')
        self.commit_change(3, 'three, otherwise', 'mm/vmscan: other three')
        self.git('checkout', '-q', 'main')
        proc = subprocess.run(['git', '-C', str(self.tree), 'cherry-pick',
                               'side'], env=self.env, capture_output=True)
        self.assertNotEqual(proc.returncode, 0)
        before = snapshot(self.patches)
        proc = self.tool('tools/export', '--allow-dirty')
        self.assertEqual(proc.returncode, 4, proc.stderr)
        self.assertIn('git cherry-pick in progress', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)

    # --- the cover letter ---------------------------------------------

    def test_cover_letter_has_the_form_of_format_patch_s(self):
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('wrote ', proc.stdout)
        text = self.cover.read_text()
        last = self.git('log', '-1', '--format=%an <%ae>%n%aD')
        head, body = text.split('\n\n', 1)
        self.assertEqual(head.splitlines(), [
            'From 0000000000000000000000000000000000000000 Mon Sep 17 '
            '00:00:00 2001',
            f'From: {last.splitlines()[0]}',
            f'Date: {last.splitlines()[1]}',
            f'Subject: [PATCH 0/2] {COVER}'])
        shortlog = self.git('shortlog', '-w72,2,4', 'kbranch/base..HEAD')
        diffstat = subprocess.run(
            ['git', '-C', str(self.tree), 'diff', '--stat=72', '--summary',
             'kbranch/base..HEAD'], env=self.env, text=True, check=True,
            stdout=subprocess.PIPE).stdout.rstrip('\n')
        self.assertEqual(body, 'The problem, the design\nand the numbers.\n\n'
                         'Second paragraph.\n\n'
                         f'{shortlog}\n\n{diffstat}\n\n\n'
                         'Based on: v6.12.118 (Debian\'s linux-source-6.12 '
                         '6.12.118-1~deb12u1,\nwhich is v6.12.118 with '
                         'Debian\'s patches; not tested on plain v6.12.118)\n'
                         '-- \ntools/export\n\n')
        self.assertNotIn('base-commit:', text, 'b4 would read "6" as its id')
        self.assertIn('Test Author (2):\n  mm/vmscan: change three\n', body)
        # not a patch of the series
        self.assertNotIn(self.cover.name,
                         (self.patches / 'series').read_text())
        before = snapshot(self.patches)
        self.git('reset', '-q', '--hard', 'kbranch/base')
        proc = self.prepared()
        self.assertIn('2 newly applied', proc.stdout)
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertEqual(snapshot(self.patches), before,
                         'the same commits, elsewhere: the same bytes')

    def test_base_commit_only_with_an_upstream_commit_id(self):
        fake = '0123456789abcdef0123456789abcdef01234567'
        base = (self.patches / 'BASE').read_text()
        (self.patches / 'BASE').write_text(f'{base}UPSTREAM_COMMIT={fake}\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(self.cover.read_text().endswith(
            f'not tested on plain v6.12.118)\nbase-commit: {fake}\n'
            f'-- \ntools/export\n\n'))
        before = snapshot(self.patches)
        for bad in ('v6.12.118', fake[:12], fake.upper()):
            (self.patches / 'BASE').write_text(f'{base}UPSTREAM_COMMIT={bad}\n')
            self.commit_change(9, bad, 'mm/vmscan: change nine')
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 2, bad)
            self.assertIn('UPSTREAM_COMMIT must be a full commit id', proc.stderr)
            self.git('reset', '-q', '--hard', 'HEAD~1')
        (self.patches / 'BASE').write_text(f'{base}UPSTREAM_COMMIT={fake}\n')
        self.assertEqual(snapshot(self.patches), before, 'nothing was written')

    def test_cover_letter_follows_its_text_and_the_series(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (self.patches / 'cover-letter.txt').write_text(
            COVER_TEXT.replace('Second', 'Another'))
        proc = self.tool('tools/export')
        self.assertEqual(proc.stdout.splitlines(), [f'wrote {self.cover}'])
        self.assertIn('\nAnother paragraph.\n', self.cover.read_text())
        self.commit_change(9, 'nine', 'mm/vmscan: change nine')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        text = self.cover.read_text()
        self.assertIn(f'Subject: [PATCH 0/3] {COVER}\n', text)
        self.assertIn('  mm/vmscan: change nine\n', text)
        # no series, no cover letter; one it wrote is removed
        self.git('reset', '-q', '--hard', 'kbranch/base')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'removed {self.cover}', proc.stdout)
        self.assertFalse(self.cover.exists())
        self.assertEqual(sorted(p.name for p in self.patches.iterdir()),
                         ['BASE', 'cover-letter.txt', 'series'])

    def test_no_cover_text_no_cover_letter(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (self.patches / 'cover-letter.txt').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('cover-letter.txt: no cover letter written', proc.stdout)
        self.assertIn(f'removed {self.cover}', proc.stdout)
        self.assertFalse(self.cover.exists())

    def test_long_subject_is_folded_as_git_folds_it(self):
        # first lines of every length around the limit, three lines, and
        # a word longer than a line
        words = ' '.join(f'word{i:02d}' for i in range(25))
        for subject in [f'{"x" * n} {words}' for n in range(1, 9)] + \
                [f'short {"y" * 90} end']:
            (self.patches / 'cover-letter.txt').write_text(
                f'{subject}\n\nText.\n')
            self.assertEqual(self.tool('tools/export').returncode, 0)
            mine = self.cover.read_text().split('\nSubject: ', 1)[1]
            mine = mine.split('\n\n', 1)[0]
            self.git('commit', '-q', '--amend', '-m', subject)
            theirs = self.git('format-patch', '--stdout', '-1', '-N',
                              '--subject-prefix=PATCH 0/2', 'HEAD')
            theirs = theirs.split('\nSubject: ', 1)[1].split('\n\n', 1)[0]
            self.assertEqual(mine, theirs, subject)
            self.git('reset', '-q', '--hard', 'HEAD@{1}')

    def test_bad_cover_text(self):
        before = snapshot(self.patches)
        for text, why in (('A subject\nno blank line\n', 'expected a subject'),
                          ('\n\nno subject\n', 'expected a subject'),
                          ('A subject\n\n', 'expected a subject'),
                          ('A subject\n\nna\u00efve\n',
                           'cover-letter.txt:3: not ASCII')):
            (self.patches / 'cover-letter.txt').write_text(text)
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 2, text)
            self.assertIn(why, proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        (self.patches / 'cover-letter.txt').write_text(COVER_TEXT)
        self.assertEqual(snapshot(self.patches), before)

    def test_a_cover_letter_it_did_not_write_is_kept(self):
        other = self.tmp / 'outgoing'
        other.mkdir()
        theirs = other / '0000-cover-letter.patch'
        theirs.write_text('Subject: [PATCH 0/5] my own series\n\nblurb\n'
                          '-- \n2.39.5\n\n')
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('was not written by tools/export', proc.stderr)
        self.assertEqual(sorted(p.name for p in other.iterdir()),
                         ['0000-cover-letter.patch'], 'nothing was written')
        (self.patches / 'cover-letter.txt').unlink()
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(theirs.read_text(), 'Subject: [PATCH 0/5] my own '
                         'series\n\nblurb\n-- \n2.39.5\n\n')
        self.git('reset', '-q', '--hard', 'kbranch/base')
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue(theirs.is_file(), 'never removed')

    # --- postings ------------------------------------------------------

    def posting(self, name='vmscan', subjects=('mm/vmscan: change three',
                                               'mm/vmscan: change thirty'),
                cover=POSTING_COVER):
        """kernel-patches/postings/<name>/ with its subjects and cover
        text; a commit at line 30 goes above the setUp's two."""
        if 'mm/vmscan: change thirty' not in self.git('log', '--format=%s'):
            self.commit_change(30, 'thirty', 'mm/vmscan: change thirty')
        posting = self.patches / 'postings' / name
        posting.mkdir(parents=True, exist_ok=True)
        (posting / 'subjects').write_text(
            '# the commits, by subject\n\n' + ''.join(s + '\n' for s in subjects))
        (posting / 'cover-letter.txt').write_text(
            f'{cover}\n\nOnly the ends of vmscan.c.\n')
        return posting

    def tree_state(self):
        """What export must leave alone in the tree: HEAD, its checkout,
        refs, worktrees."""
        return (self.git('rev-parse', 'HEAD'), self.git('status', '--porcelain'),
                self.git('for-each-ref'), self.git('worktree', 'list', '--porcelain'),
                self.git('symbolic-ref', 'HEAD'))

    def test_a_posting_of_two_commits_apart(self):
        fake = '0123456789abcdef0123456789abcdef01234567'
        base = (self.patches / 'BASE').read_text()
        (self.patches / 'BASE').write_text(f'{base}UPSTREAM_COMMIT={fake}\n')
        posting = self.posting()
        self.git('notes', '--ref=kbranch', 'add', '-m', 'checkpatch: a reason',
                 'HEAD')                # change thirty's
        state = self.tree_state()
        proc = self.tool('tools/export', env={'TMPDIR': str(self.scratch())})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(self.tree_state(), state, 'the tree is not touched')
        self.assertEqual(list(self.scratch().iterdir()), [], 'no scratch left')
        one = posting / '0001-mm-vmscan-change-three.patch'
        two = posting / '0002-mm-vmscan-change-thirty.patch'
        cover = posting / '0000-cover-letter.patch'
        self.assertIn(f'wrote {cover}', proc.stdout.splitlines())
        self.assertIn(f'wrote {two}', proc.stdout.splitlines())
        self.assertEqual(sorted(p.name for p in posting.iterdir()),
                         [cover.name, one.name, two.name, 'cover-letter.txt',
                          'series', 'subjects'])
        self.assertEqual((posting / 'series').read_text().splitlines()[-2:],
                         [one.name, two.name])
        text = cover.read_text()
        self.assertIn(f'\nSubject: [PATCH 0/2] {POSTING_COVER}\n', text)
        self.assertIn('\n\nOnly the ends of vmscan.c.\n\n', text)
        self.assertIn('Test Author (2):\n  mm/vmscan: change three\n'
                      '  mm/vmscan: change thirty\n', text)
        self.assertNotIn('change eight', text)
        self.assertTrue(text.endswith(
            f'not tested on plain v6.12.118)\nbase-commit: {fake}\n'
            f'-- \ntools/export\n\n'), text)
        self.assertIn('Subject: [PATCH 1/2] mm/vmscan: change three\n',
                      one.read_text())
        self.assertIn('Subject: [PATCH 2/2] mm/vmscan: change thirty\n',
                      two.read_text())
        # the author, date and message of the series' own patch, its note
        ours = (self.patches / '0003-mm-vmscan-change-thirty.patch').read_text()
        theirs = two.read_text()
        self.assertEqual(ours.split('\n---\n')[0].replace('[PATCH]', '[PATCH 2/2]'),
                         theirs.split('\n---\n')[0])
        self.assertIn('Notes (kbranch):\n    checkpatch: a reason\n', theirs)
        self.assertNotIn('\n-- \n', theirs)    # --no-signature
        # git am applies it on the base: lines 3 and 30, not 8
        clone = self.tmp / 'am'
        self.git('clone', '-q', str(self.tree), str(clone))
        self.git('checkout', '-q', '--detach', 'kbranch/base', cwd=clone)
        self.git('am', '-q', str(one), str(two), cwd=clone)
        lines = (clone / 'mm' / 'vmscan.c').read_text().splitlines()
        self.assertEqual((lines[2], lines[7], lines[29]), ('three', 'line 8', 'thirty'))
        fmt = '--format=%an %ae %ad%n%B'
        self.assertEqual(self.git('log', '-2', fmt, cwd=clone),
                         self.git('log', '-1', fmt, 'HEAD') + '\n\n' +
                         self.git('log', '-1', fmt, 'HEAD~2'))
        # again: nothing changes
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('up to date', proc.stdout)
        self.assertEqual(snapshot(self.patches), before)

    def test_a_posting_with_a_prefix_of_its_own(self):
        posting = self.posting()
        (posting / 'prefix').write_text('# an RFC, not for merging yet\nRFC PATCH\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'\nSubject: [RFC PATCH 0/2] {POSTING_COVER}\n',
                      (posting / '0000-cover-letter.patch').read_text())
        self.assertIn('Subject: [RFC PATCH 1/2] mm/vmscan: change three\n',
                      (posting / '0001-mm-vmscan-change-three.patch').read_text())
        self.assertIn('Subject: [RFC PATCH 2/2] mm/vmscan: change thirty\n',
                      (posting / '0002-mm-vmscan-change-thirty.patch').read_text())
        # the series' own patches keep theirs
        self.assertIn('Subject: [PATCH] mm/vmscan: change thirty\n',
                      (self.patches / '0003-mm-vmscan-change-thirty.patch').read_text())
        for bad in ('RFC\n', 'RFC PATCH\nv2\n', '[RFC] PATCH\n'):
            (posting / 'prefix').write_text(bad)
            before = snapshot(self.patches)
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 2, (bad, proc.stderr))
            self.assertIn('prefix: one line, the word PATCH', proc.stderr)
            self.assertEqual(snapshot(self.patches), before, 'nothing written')
        (posting / 'prefix').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('Subject: [PATCH 1/2] mm/vmscan: change three\n',
                      (posting / '0001-mm-vmscan-change-three.patch').read_text())

    def scratch(self):
        """An empty TMPDIR for export: what it leaves there shows."""
        path = self.tmp / 'scratch'
        path.mkdir(exist_ok=True)
        return path

    def test_a_posting_follows_its_subjects_and_the_tree(self):
        posting = self.posting()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (posting / 'subjects').write_text('mm/vmscan: change eight\n'
                                          'mm/vmscan: change thirty\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'removed {posting}/0001-mm-vmscan-change-three.patch',
                      proc.stdout.splitlines())
        self.assertEqual(sorted(p.name for p in posting.glob('*.patch')),
                         ['0000-cover-letter.patch',
                          '0001-mm-vmscan-change-eight.patch',
                          '0002-mm-vmscan-change-thirty.patch'])
        self.assertEqual(proc.stdout.splitlines(), [
            f'wrote {posting}/0000-cover-letter.patch',
            f'wrote {posting}/0001-mm-vmscan-change-eight.patch',
            # on eight, not three: its index line changes
            f'wrote {posting}/0002-mm-vmscan-change-thirty.patch',
            f'wrote {posting}/series',
            f'removed {posting}/0001-mm-vmscan-change-three.patch'])
        # a reworded commit: its patch in the posting follows
        self.git('commit', '-q', '--amend', '-m', 'mm/vmscan: change thirty\n\n'
                 'Reworded.\n\nSigned-off-by: Test Author <author@example.org>')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertIn('\nReworded.\n',
                      (posting / '0002-mm-vmscan-change-thirty.patch').read_text())
        # a posting gone (its subjects and cover text removed): what export
        # wrote goes, the rest stays
        (posting / 'notes.txt').write_text('mine\n')
        (posting / 'subjects').unlink()
        (posting / 'cover-letter.txt').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in posting.iterdir()), ['notes.txt'])
        (posting / 'notes.txt').unlink()
        self.posting()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (posting / 'subjects').unlink()
        (posting / 'cover-letter.txt').unlink()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertFalse(posting.exists(), 'nothing else was in it')

    def test_a_subject_that_matches_nothing_writes_nothing(self):
        self.assertEqual(self.tool('tools/export').returncode, 0)
        posting = self.posting(subjects=('mm/vmscan: change three',
                                         'mm/vmscan: change thirteen'))
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        self.assertIn(f'{posting}/subjects:4: no commit above the base has the '
                      f'subject "mm/vmscan: change thirteen"', proc.stderr)
        self.assertIn('the posting vmscan is not written', proc.stderr)
        self.assertIn(f'edit {posting}/subjects', proc.stderr)
        self.assertEqual(snapshot(self.patches), before,
                         'nothing was written: not the series\'s new patch either')
        # a posting written before whose commit is gone: nothing changes
        self.posting()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        self.git('commit', '-q', '--amend', '-m', 'mm/vmscan: change 30')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('"mm/vmscan: change thirty"', proc.stderr)
        self.assertIn('the posting vmscan is not written', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)

    def test_bad_subjects(self):
        self.commit_change(12, 'twelve', 'mm/vmscan: change eight')
        for subjects, why in (
                (('mm/vmscan: change thirty', 'mm/vmscan: change three'),
                 ':4: "mm/vmscan: change three" comes before "mm/vmscan: '
                 'change thirty" in the series'),
                (('mm/vmscan: change three', 'mm/vmscan: change three'),
                 ':4: "mm/vmscan: change three" is listed twice'),
                (('mm/vmscan: change eight',),
                 ':3: 2 commits above the base have the subject '
                 '"mm/vmscan: change eight"'),
                ((), 'subjects lists no subject')):
            self.posting(subjects=subjects)
            before = snapshot(self.patches)
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 2, proc.stderr)
            self.assertIn(why, proc.stderr)
            self.assertEqual(snapshot(self.patches), before)
        posting = self.posting(subjects=('mm/vmscan: change three',))
        (posting / 'cover-letter.txt').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('needs both subjects and cover-letter.txt', proc.stderr)
        (posting / 'cover-letter.txt').write_text('no blank line\nafter it\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{posting}/cover-letter.txt: expected a subject line',
                      proc.stderr)
        posting.rename(posting.with_name('Vmscan'))
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn("Vmscan: a posting's name is lowercase letters", proc.stderr)

    def test_a_commit_that_does_not_apply_alone(self):
        self.commit_change(3, 'three again', 'mm/vmscan: change three again')
        posting = self.posting(subjects=('mm/vmscan: change eight',
                                         'mm/vmscan: change three again'))
        state = self.tree_state()
        before = snapshot(self.patches)
        proc = self.tool('tools/export', env={'TMPDIR': str(self.scratch())})
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        again = self.git('rev-parse', '--short=12', 'HEAD~1')
        eight = self.git('rev-parse', '--short=12', 'HEAD~2')
        self.assertIn(f'posting vmscan: commit {again} ("mm/vmscan: change three '
                      f'again") does not apply on the base with the 1 commit(s) '
                      f'listed before it ({eight}): CONFLICT (content): Merge '
                      f'conflict in mm/vmscan.c; nothing was written', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        self.assertEqual(self.tree_state(), state)
        self.assertEqual(len(self.git('worktree', 'list').splitlines()), 1)
        self.assertEqual(list(self.scratch().iterdir()), [], 'no scratch left')
        # with the commit it needs, it applies
        (posting / 'subjects').write_text('mm/vmscan: change three\n'
                                          'mm/vmscan: change three again\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((posting / '0002-mm-vmscan-change-three-again.patch').is_file())

    def test_ctrl_c_leaves_nothing_behind(self):
        """SIGINT while a cherry-pick runs: no scratch clone, no worktree,
        nothing written."""
        self.ctrl_c_leaves_nothing_behind()

    def test_ctrl_c_even_when_the_tests_run_with_sigint_ignored(self):
        """The tests pass whatever SIGINT disposition they inherit: as a
        background job of a script, (trap '' INT; ci/test), ignores it."""
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.ctrl_c_leaves_nothing_behind()
        finally:
            signal.signal(signal.SIGINT, old)

    def ctrl_c_leaves_nothing_behind(self):
        self.posting()
        shim = self.tmp / 'bin'
        shim.mkdir()
        real = subprocess.run(['sh', '-c', 'command -v git'], text=True,
                              stdout=subprocess.PIPE, check=True).stdout.strip()
        (shim / 'git').write_text(
            '#!/bin/sh\n'
            'case " $* " in *" cherry-pick "*) kill -INT $PPID; sleep 5;; esac\n'
            f'exec {real} "$@"\n')
        (shim / 'git').chmod(0o755)
        state = self.tree_state()
        before = snapshot(self.patches)
        proc = self.tool('tools/export', env={
            'TMPDIR': str(self.scratch()),
            'PATH': f'{shim}:{self.env["PATH"]}'})
        self.assertEqual(proc.returncode, 130, proc.stderr)
        self.assertIn('interrupted', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        self.assertEqual(self.tree_state(), state)
        self.assertEqual(list(self.scratch().iterdir()), [], 'no scratch left')

    def test_files_in_a_posting_it_did_not_write_are_kept(self):
        posting = self.posting()
        (posting / 'notes.txt').write_text('mine\n')
        (posting / '0009-mine.patch').write_text('a patch of the user\n')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (posting / 'subjects').write_text('mm/vmscan: change thirty\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in posting.iterdir()), [
            '0000-cover-letter.patch', '0001-mm-vmscan-change-thirty.patch',
            '0009-mine.patch', 'cover-letter.txt', 'notes.txt', 'series',
            'subjects'])
        self.assertEqual((posting / 'notes.txt').read_text(), 'mine\n')
        # one it would overwrite: refused, nothing written
        (posting / 'subjects').write_text('mm/vmscan: change three\n'
                                          'mm/vmscan: change thirty\n')
        theirs = posting / '0002-mm-vmscan-change-thirty.patch'
        theirs.write_text('a patch of the user\n')
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{posting} holds {theirs.name}, which tools/export did '
                      f'not write', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        theirs.unlink()
        (posting / '0000-cover-letter.patch').write_text('my own\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{posting}/0000-cover-letter.patch was not written by '
                      f'tools/export', proc.stderr)
        (posting / 'series').write_text('mine.patch\n')
        (posting / '0000-cover-letter.patch').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{posting}/series was not written by tools/export',
                      proc.stderr)
        # gone: its own series is not export's, nothing is removed
        (posting / 'subjects').unlink()
        (posting / 'cover-letter.txt').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertTrue((posting / '0001-mm-vmscan-change-thirty.patch').is_file())
        self.assertTrue((posting / '0009-mine.patch').is_file())

    def test_a_posting_has_the_same_bytes_on_every_machine(self):
        posting = self.posting()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        for name in ['series'] + [p.name for p in posting.glob('*.patch')]:
            (posting / name).unlink()
        # the same sender (GIT_AUTHOR_NAME) on another machine
        proc = self.tool('tools/export', env={**elsewhere(self.tmp),
                                              'GIT_AUTHOR_NAME': 'Test Author'})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        # and in another --patch-dir: the posting's files, the same bytes
        other = self.tmp / 'outgoing'
        proc = self.tool('tools/export', '--patch-dir', other)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in (other / 'postings' / 'vmscan').iterdir()),
                         ['0000-cover-letter.patch', '0001-mm-vmscan-change-three.patch',
                          '0002-mm-vmscan-change-thirty.patch', 'series'])
        for path in (other / 'postings' / 'vmscan').iterdir():
            self.assertEqual(path.read_bytes(), (posting / path.name).read_bytes())

    def test_a_posting_is_sent_by_whoever_exports_it(self):
        """The sender signs each patch off, last and once; another
        author is kept with their sign-off (the DCO's chain); the
        project's own commits (a placeholder address) become the
        sender's."""
        posting = self.posting()
        by = {'GIT_AUTHOR_NAME': 'Ann Sender', 'GIT_AUTHOR_EMAIL': 'ann@example.org'}
        proc = self.tool('tools/export', env=by)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        text = (posting / '0001-mm-vmscan-change-three.patch').read_text()
        self.assertIn('\nFrom: Test Author <author@example.org>\n', text)
        self.assertIn('tested.\n\nSigned-off-by: Test Author <author@example.org>\n'
                      'Signed-off-by: Ann Sender <ann@example.org>\n---\n', text)
        # the series itself is not touched
        series_patch = self.patches / '0001-mm-vmscan-change-three.patch'
        self.assertNotIn('Ann Sender', series_patch.read_text())
        # a commit of the project's own, the sender's sign-off already in
        # it (not last), and one without a trailer block
        path = self.tree / 'mm' / 'vmscan.c'
        path.write_text(path.read_text() + 'own\n')
        self.git('-c', 'user.name=Project', '-c', 'user.email=p@users.noreply.example',
                 'commit', '-q', '-a', '--author=Project <p@users.noreply.example>', '-m',
                 'mm/vmscan: own\n\nWhy.\n\nSigned-off-by: Ann Sender <ann@example.org>\n'
                 'Signed-off-by: Project <p@users.noreply.example>\nCc: x@example.org')
        path.write_text(path.read_text() + 'note\n')
        self.git('commit', '-q', '-a', '-m', 'mm/vmscan: note\n\nWhy.')
        self.posting(subjects=('mm/vmscan: change three', 'mm/vmscan: change thirty',
                               'mm/vmscan: own', 'mm/vmscan: note'))
        proc = self.tool('tools/export', env=by)
        self.assertEqual(proc.returncode, 0, proc.stderr)
        own = (posting / '0003-mm-vmscan-own.patch').read_text()
        self.assertIn('\nFrom: Ann Sender <ann@example.org>\n', own)
        self.assertNotIn('Project', own)
        self.assertIn('\nWhy.\n\nCc: x@example.org\n'
                      'Signed-off-by: Ann Sender <ann@example.org>\n---\n', own)
        note = (posting / '0004-mm-vmscan-note.patch').read_text()
        self.assertIn('\nWhy.\n\nSigned-off-by: Ann Sender <ann@example.org>\n---\n', note)

    def test_a_posting_without_a_sender_is_refused(self):
        self.posting()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        before = snapshot(self.patches)
        self.commit_change(40, 'forty', 'mm/vmscan: change forty')
        env = {k: v for k, v in self.env.items() if not k.startswith('GIT_')}
        proc = subprocess.run([str(self.repo / 'tools/export')], cwd=self.repo,
                              env=env, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('set git config user.name and user.email', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)    # nothing written

    def test_no_tree(self):
        proc = self.tool('tools/export', env={'RECLAIM_TREE': str(self.tmp / 'none')})
        self.assertEqual(proc.returncode, 3)
        self.assertIn('run tools/prepare first', proc.stderr)


CHANGES = 'Changes in v2:\n- mm/vmscan: change eight says why.\n- New: mm/vmscan: change nine.\n'


class VersionTest(ScratchRepo):
    """kernel-patches/VERSION: a series in b4's form (review F6):
    numbered, versioned subjects, the changes in the cover letter, and the
    range-diff against the previous version from the repository's
    history."""

    def setUp(self):
        super().setUp()
        self.cover = two_changes(self)
        self.range_diff = self.patches / 'range-diff-v1..v2.txt'
        # the repository, with v1 of the series committed
        self.git('init', '-q', '-b', 'main', cwd=self.repo)
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.v1 = self.commit_patches('series: v1')

    def commit_patches(self, message):
        """Commits kernel-patches/ in the repository; returns its id."""
        self.git('add', '-A', 'kernel-patches', cwd=self.repo)
        self.git('commit', '-q', '-m', message, cwd=self.repo)
        return self.git('rev-parse', 'HEAD', cwd=self.repo)

    def make_v2(self):
        """v2 in the tree: change eight reworded, change nine added; VERSION
        2 and changes.txt written."""
        self.git('commit', '-q', '--amend', '-m',
                 'mm/vmscan: change eight\n\nWhy it changes, and how it was '
                 'tested.\nAnd why it is needed.\n\n'
                 'Signed-off-by: Test Author <author@example.org>')
        self.commit_change(9, 'nine', 'mm/vmscan: change nine')
        (self.patches / 'VERSION').write_text('2\n')
        (self.patches / 'changes.txt').write_text(CHANGES)

    def patch_files(self):
        return [self.patches / n for n in
                ('0001-mm-vmscan-change-three.patch',
                 '0002-mm-vmscan-change-eight.patch',
                 '0003-mm-vmscan-change-nine.patch')]

    def test_without_version_nothing_changes(self):
        before = snapshot(self.patches)
        one = self.patches / '0001-mm-vmscan-change-three.patch'
        self.assertIn('\nSubject: [PATCH] mm/vmscan: change three\n', one.read_text())
        self.assertIn(f'\nSubject: [PATCH 0/2] {COVER}\n', self.cover.read_text())
        # changes.txt without VERSION: not read
        (self.patches / 'changes.txt').write_text('anything\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('up to date', proc.stdout)
        (self.patches / 'changes.txt').unlink()
        self.assertEqual(snapshot(self.patches), before)
        self.assertEqual(list(self.patches.glob('range-diff*')), [])

    def test_version_2(self):
        self.make_v2()
        state = self.git('for-each-ref'), self.git('rev-parse', 'HEAD')
        proc = self.tool('tools/export', env={'TMPDIR': str(self.scratch())})
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(list(self.scratch().iterdir()), [], 'no scratch left')
        self.assertEqual((self.git('for-each-ref'), self.git('rev-parse', 'HEAD')),
                         state, 'the tree is not touched')
        self.assertIn(f'wrote {self.range_diff}', proc.stdout.splitlines())
        one, two, three = self.patch_files()
        # the file names of v1, the subjects numbered and versioned
        self.assertEqual((self.patches / 'series').read_text().splitlines()[2:],
                         [one.name, two.name, three.name])
        for num, (path, what) in enumerate(((one, 'three'), (two, 'eight'),
                                            (three, 'nine')), 1):
            self.assertIn(f'\nSubject: [PATCH v2 {num}/3] mm/vmscan: change '
                          f'{what}\n', path.read_text())
        text = self.cover.read_text()
        self.assertIn(f'\nSubject: [PATCH v2 0/3] {COVER}\n', text)
        shortlog = self.git('shortlog', '-w72,2,4', 'kbranch/base..HEAD')
        self.assertIn('\n\nSecond paragraph.\n\n' + CHANGES + '\n' + shortlog +
                      '\n\n', text)
        self.assertTrue(text.endswith('-- \ntools/export\n\n'))
        # the range-diff: v1 as committed, against v2
        diff = self.range_diff.read_text()
        self.assertTrue(diff.startswith(
            '# Written by tools/export: git range-diff of two versions of the '
            f'series.\n# v1: the series in kernel-patches/ at commit '
            f'{self.v1[:12]} of the repository\n'), diff)
        self.assertRegex(diff, r'\n1:  [0-9a-f]{12} = 1:  [0-9a-f]{12} '
                               r'mm/vmscan: change three\n')
        self.assertRegex(diff, r'\n2:  [0-9a-f]{12} ! 2:  [0-9a-f]{12} '
                               r'mm/vmscan: change eight\n')
        self.assertIn('\n    +    And why it is needed.\n', diff)
        self.assertRegex(diff, r'\n-:  -{12} > 3:  [0-9a-f]{12} '
                               r'mm/vmscan: change nine\n')
        self.assertNotIn('\x1b', diff)
        # check-series reads the subjects; git am applies the series on the
        # base and strips the prefix
        check = load_tool('tools/check-series', 'check_series')
        for path in (one, two, three):
            subject, _ = check.message_of(path)
            self.assertTrue(subject.startswith('Subject: [PATCH v2 '), subject)
            self.assertTrue(check.SUBJECT_RE.match(subject), subject)
        clone = self.tmp / 'am'
        self.git('clone', '-q', str(self.tree), str(clone))
        self.git('checkout', '-q', '--detach', 'kbranch/base', cwd=clone)
        self.git('am', '-q', str(one), str(two), str(three), cwd=clone)
        fmt = '--format=%an %ae %ad%n%B'
        self.assertEqual(self.git('log', fmt, 'kbranch/base..HEAD', cwd=clone),
                         self.git('log', fmt, 'kbranch/base..HEAD'))
        # exporting again, with v2 committed: nothing changes
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('up to date', proc.stdout)
        self.commit_patches('series: v2')
        proc = self.tool('tools/export')
        self.assertIn('up to date', proc.stdout)
        self.assertEqual(snapshot(self.patches), before)
        # tools/prepare applies it, and its commits export the same bytes
        self.git('reset', '-q', '--hard', 'kbranch/base')
        proc = self.prepared()
        self.assertIn('3 newly applied', proc.stdout)
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertEqual(snapshot(self.patches), before)
        # the same bytes elsewhere: another TZ, HOME, committer, date
        for path in [self.range_diff, self.cover] + self.patch_files():
            path.unlink()
        proc = self.tool('tools/export', env=elsewhere(self.tmp))
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(snapshot(self.patches), before)

    def test_version_3_replaces_the_range_diff(self):
        self.make_v2()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        v2 = self.commit_patches('series: v2')
        theirs = self.patches / 'range-diff-v0..v1.txt'
        theirs.write_text('my own notes\n')
        self.commit_change(12, 'twelve', 'mm/vmscan: change twelve')
        (self.patches / 'VERSION').write_text('# the version posted next\n3\n')
        (self.patches / 'changes.txt').write_text(
            'Changes in v3:\n- New: mm/vmscan: change twelve.\n\n' + CHANGES)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'removed {self.range_diff}', proc.stdout.splitlines())
        self.assertFalse(self.range_diff.exists())
        self.assertTrue(theirs.is_file(), 'not written by export: kept')
        diff = (self.patches / 'range-diff-v2..v3.txt').read_text()
        self.assertIn(f'# v2: the series in kernel-patches/ at commit {v2[:12]} ', diff)
        self.assertRegex(diff, r'\n3:  [0-9a-f]{12} = 3:  [0-9a-f]{12} '
                               r'mm/vmscan: change nine\n')
        self.assertIn(' > 4:  ', diff)
        text = self.cover.read_text()
        self.assertIn(f'\nSubject: [PATCH v3 0/4] {COVER}\n', text)
        self.assertIn('\nChanges in v3:\n- New: mm/vmscan: change twelve.\n\n'
                      'Changes in v2:\n', text)
        # no VERSION: the series as before, the range-diff export wrote gone
        (self.patches / 'VERSION').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertEqual(sorted(p.name for p in self.patches.glob('range-diff*')),
                         [theirs.name])
        self.assertNotIn('Changes in', self.cover.read_text())
        self.assertIn('\nSubject: [PATCH] mm/vmscan: change nine\n',
                      self.patch_files()[2].read_text())

    def test_version_1_is_numbered_without_a_version(self):
        (self.patches / 'VERSION').write_text('1\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('\nSubject: [PATCH 1/2] mm/vmscan: change three\n',
                      self.patch_files()[0].read_text())
        self.assertIn(f'\nSubject: [PATCH 0/2] {COVER}\n', self.cover.read_text())
        self.assertEqual(list(self.patches.glob('range-diff*')), [])
        before = snapshot(self.patches)
        (self.patches / 'changes.txt').write_text('Changes in v1:\n- none\n')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('VERSION says v1, expected no changes.txt', proc.stderr)
        (self.patches / 'changes.txt').unlink()
        self.assertEqual(snapshot(self.patches), before)

    def test_bad_version_or_changes_write_nothing(self):
        self.make_v2()
        before = snapshot(self.patches)
        for name, text, why in (
                ('VERSION', 'two\n', 'VERSION: expected one line, the version'),
                ('VERSION', '0\n', 'VERSION: expected one line'),
                ('VERSION', '2\n3\n', 'VERSION: expected one line'),
                ('changes.txt', 'Changes in v3:\n- x\n',
                 'changes.txt: VERSION says v2, expected its first line '
                 '"Changes in v2:"'),
                ('changes.txt', 'Changes in v2:\n- na\u00efve\n',
                 'changes.txt:2: not ASCII')):
            keep = (self.patches / name).read_text()
            (self.patches / name).write_text(text)
            proc = self.tool('tools/export')
            self.assertEqual(proc.returncode, 2, text)
            self.assertIn(why, proc.stderr)
            self.assertIn('nothing was written', proc.stderr)
            self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
            (self.patches / name).write_text(keep)
            self.assertEqual(snapshot(self.patches), before)
        # v4's v3 is nowhere in the history
        (self.patches / 'VERSION').write_text('4\n')
        (self.patches / 'changes.txt').unlink()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('VERSION says v4: the range-diff needs v3, and no '
                      'commit of the repository\'s history has '
                      'kernel-patches/VERSION 3', proc.stderr)
        self.assertEqual(len(proc.stderr.splitlines()), 1, proc.stderr)
        (self.patches / 'changes.txt').write_text(CHANGES)
        (self.patches / 'VERSION').write_text('2\n')
        self.assertEqual(snapshot(self.patches), before)
        # a repository without history
        shutil.rmtree(self.repo / '.git')
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn('is in no git repository', proc.stderr)
        self.assertEqual(snapshot(self.patches), before)

    def test_a_range_diff_it_did_not_write_is_kept(self):
        self.make_v2()
        self.range_diff.write_text('mine\n')
        before = snapshot(self.patches)
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        self.assertIn(f'{self.range_diff} was not written by tools/export',
                      proc.stderr)
        self.assertEqual(snapshot(self.patches), before)
        (self.patches / 'VERSION').unlink()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        self.assertEqual(self.range_diff.read_text(), 'mine\n')

    def test_a_previous_version_that_no_longer_applies(self):
        """v1 committed on another base: no range-diff, said why."""
        one = self.patches / '0001-mm-vmscan-change-three.patch'
        one.write_text(one.read_text().replace('-line 3\n', '-line 33\n'))
        v1 = self.commit_patches('series: v1, on another base')
        self.git('checkout', '-q', 'HEAD~1', '--', 'kernel-patches', cwd=self.repo)
        self.make_v2()
        proc = self.tool('tools/export')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn(f'export: no range-diff written: v1 (kernel-patches/ at '
                      f'commit {v1[:12]}) does not apply on the base: '
                      f'{one.name} does not apply', proc.stdout)
        self.assertEqual(list(self.patches.glob('range-diff*')), [])

    def scratch(self):
        path = self.tmp / 'scratch'
        path.mkdir(exist_ok=True)
        return path


if __name__ == '__main__':
    unittest.main()
