# SPDX-License-Identifier: GPL-2.0
"""tools/check-series: its pure functions (the subject and changelog
rules, the reviewer notes below a patch's --- line, the files a series
touches, the W=1 warnings that count); its sub-commands (lint, the
default, w1 and bisect, each with its own checks and options; bisect's
--from must name a patch of the series, and --to one from it on, both
refused before any check runs; a bisect run's builds as KCIDB data); a
bad series file is bad input (exit 2)."""

import sys
import tempfile
import unittest
from pathlib import Path
from unittest import mock

from fixtures import REPO, Isolated, ScratchRepo, load_tool

sys.path.insert(0, str(REPO / 'tools' / 'lib'))


def load_check_series():
    return load_tool('tools/check-series', 'check_series')


PATCH = """From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001
From: A <a@example.org>
Subject: [PATCH] mm/vmscan: change

Why, what, and how it was tested.
More.
More still.
{extra}
Signed-off-by: A <a@example.org>
---

Notes (kbranch):
    checkpatch: UNKNOWN_COMMIT_ID is expected: no history
    checkpatch: OPEN_ENDED_LINE and PARENTHESIS_ALIGNMENT are expected

 mm/vmscan.c | 1 +
"""


class NotesTest(Isolated):

    def setUp(self):
        super().setUp()
        self.cs = load_check_series()
        self.known = {'UNKNOWN_COMMIT_ID', 'OPEN_ENDED_LINE', 'PARENTHESIS_ALIGNMENT'}

    def test_justifications_come_from_the_notes(self):
        import series
        notes = series.patch_notes(PATCH.format(extra=''))
        types, problems = self.cs.justified_types(notes, self.known)
        self.assertEqual(types, self.known)
        self.assertEqual(problems, [])

    def test_unknown_type_and_prose_are_refused(self):
        types, problems = self.cs.justified_types(
            'checkpatch: NOT_A_TYPE reason\ncheckpatch: the reason first',
            self.known)
        self.assertEqual(len(problems), 2, problems)
        self.assertIn('NOT_A_TYPE is not a checkpatch type', problems[0])
        self.assertIn('does not start with a checkpatch type name', problems[1])

    def test_type_lists_and_other_lines(self):
        types, problems = self.cs.justified_types(
            'checkpatch: A_B, C and D9 are fine here\n'
            'checkpatch: E\n'
            'Checkpatch: LOWER is not a justification\n'
            'a line about checkpatch: F\n', known=None)
        self.assertEqual(types, {'A_B', 'C', 'D9', 'E'})
        self.assertEqual(problems, [])
        types, problems = self.cs.justified_types('checkpatch: A_B reason', set())
        self.assertEqual(types, {'A_B'})
        self.assertEqual(len(problems), 1, problems)

    def test_a_justification_in_the_changelog_is_refused(self):
        with tempfile.TemporaryDirectory() as tmp:
            good = Path(tmp) / 'good.patch'
            good.write_text(PATCH.format(extra=''))
            self.assertEqual(self.cs.check_changelog(good), [])
            bad = Path(tmp) / 'bad.patch'
            bad.write_text(PATCH.format(extra='\ncheckpatch: UNKNOWN_COMMIT_ID why\n'))
            problems = self.cs.check_changelog(bad)
            self.assertEqual(len(problems), 1, problems)
            self.assertIn('below the --- line', problems[0])


class ChangelogTest(Isolated):

    def setUp(self):
        super().setUp()
        self.cs = load_check_series()

    def test_subject_needs_a_subsystem_prefix(self):
        for subject in ('Subject: [PATCH] mm/vmscan: add a KUnit suite',
                        'Subject: [PATCH v2 03/18] nfs: let reclaim wait',
                        'Subject: [PATCH] mm/vmscan: lockdep: two levels',
                        'Subject: [PATCH] mm,vmscan: no space after the comma',
                        "Subject: [PATCH v2 06/27] pNFS: Don't enter reclaim",
                        'Subject: [PATCH] NFSD: the server\'s own tag'):
            with self.subTest(subject=subject):
                self.assertTrue(self.cs.SUBJECT_RE.match(subject))
        for subject in ('Subject: [PATCH] Add a thing',
                        'Subject: [PATCH] MM: capitals',
                        'Subject: [PATCH] PNFS: not the client\'s tag',
                        'Subject: [PATCH] mm/vmscan:no space',
                        'Subject: [PATCH] mm/vmscan: ',
                        'Subject: mm/vmscan: no [PATCH]',
                        'Subject: [PATCH] mm, vmscan: a space in the prefix'):
            with self.subTest(subject=subject):
                self.assertFalse(self.cs.SUBJECT_RE.match(subject))

    def problems(self, text):
        patch = self.tmp / 'x.patch'
        patch.write_text(text)
        return self.cs.check_changelog(patch)

    def test_each_rule(self):
        head = 'From: A <a@example.org>\nSubject: {}\n\n'
        sob = 'Signed-off-by: A <a@example.org>\n'
        body = 'What.\nWhy.\nTested how.\n'
        good = '[PATCH] mm: a change'
        self.assertEqual(self.problems(head.format(good) + body + sob +
                                       '---\n mm/x.c | 1 +\n'), [])
        for text, why in (
                (head.format('[PATCH] a change') + body + sob,
                 "subject needs a subsystem prefix (\"mm/vmscan: ...\"): "
                 "'Subject: [PATCH] a change'"),
                # tags are not the changelog; lines below --- are not either
                (head.format(good) + 'What.\nWhy.\n' + sob +
                 'Reviewed-by: B <b@example.org>\n---\nTested how.\n',
                 'the changelog must say what, why and how it was tested '
                 '(fewer than 3 lines)'),
                (head.format(good) + body + '---\n' + sob, 'no Signed-off-by'),
                (head.format(good) + body + 'checkpatch: X why\n' + sob,
                 'a "checkpatch: " line in the changelog')):
            with self.subTest(why=why):
                problems = self.problems(text)
                self.assertEqual(len(problems), 1, problems)
                self.assertIn(why, problems[0])


# A stand-in for scripts/checkpatch.pl: --list-types lists four types or
# fails (LIST_FAIL), a check prints RUN's messages and exits as it says.
CHECKPATCH = r"""#!/usr/bin/perl
if (grep { $_ eq '--list-types' } @ARGV) {
    if (LIST_FAIL) {
        print STDERR "Can't locate Term/ANSIColor.pm in \@INC\n";
        exit 2;
    }
    print "  1 UNKNOWN_COMMIT_ID\n  2 OPEN_ENDED_LINE\n"
        . "  3 PARENTHESIS_ALIGNMENT\n  4 LONG_LINE\n";
    exit 0;
}
RUN
"""
# checkpatch.pl dying in the middle (a perl error): no message, exit 255
CRASH = ('print STDERR "Undefined subroutine &main::annotate_values called '
         'at scripts/checkpatch.pl line 7163.\\n"; exit 255;')
# a message the notes justify; checkpatch.pl exits 1 after any message
JUSTIFIED = 'print "WARNING:UNKNOWN_COMMIT_ID: Unknown commit id \'ac35a4902374\'\\n"; exit 1;'


class CheckpatchTest(Isolated):
    """check_checkpatch() against a stand-in checkpatch.pl in a tree of
    its own (one per case: checkpatch_types() asks each tree once)."""

    def setUp(self):
        super().setUp()
        self.cs = load_check_series()
        self.with_notes = self.tmp / 'notes.patch'
        self.with_notes.write_text(PATCH.format(extra=''))
        self.without_notes = self.tmp / 'plain.patch'
        self.without_notes.write_text(PATCH.format(extra='').split('\nNotes')[0])
        self.trees = 0

    def tree(self, run, list_fail=False):
        self.trees += 1
        tree = self.tmp / f'tree{self.trees}'
        (tree / 'scripts').mkdir(parents=True)
        (tree / 'scripts' / 'checkpatch.pl').write_text(
            CHECKPATCH.replace('LIST_FAIL', '1' if list_fail else '0')
            .replace('RUN', run))
        return tree

    def test_a_justified_message_passes(self):
        # the control of the two cases below
        self.assertEqual(self.cs.check_checkpatch(self.tree(JUSTIFIED), self.with_notes), [])
        self.assertEqual(self.cs.check_checkpatch(self.tree('exit 0;'), self.with_notes), [])
        problems = self.cs.check_checkpatch(self.tree(JUSTIFIED), self.without_notes)
        self.assertEqual(problems, ["WARNING:UNKNOWN_COMMIT_ID: Unknown commit id "
                                    "'ac35a4902374'"])

    def test_checkpatch_dying_without_a_message_fails_whatever_the_notes_say(self):
        for patch in (self.with_notes, self.without_notes):
            with self.subTest(patch=patch.name):
                problems = self.cs.check_checkpatch(self.tree(CRASH), patch)
                self.assertEqual(len(problems), 1, problems)
                self.assertEqual(problems[0], (
                    'checkpatch.pl exit 255 without a message: Undefined '
                    'subroutine &main::annotate_values called at '
                    'scripts/checkpatch.pl line 7163.'))

    def test_a_failed_list_types_is_an_error_when_the_notes_name_types(self):
        tree = self.tree(JUSTIFIED, list_fail=True)
        problems = self.cs.check_checkpatch(tree, self.with_notes)
        self.assertEqual(problems, [
            "the notes justify OPEN_ENDED_LINE, PARENTHESIS_ALIGNMENT, "
            "UNKNOWN_COMMIT_ID, but checkpatch.pl --list-types exit 2, 0 "
            "types: Can't locate Term/ANSIColor.pm in @INC: the type names "
            "cannot be checked"])
        # a patch that justifies nothing needs no type names
        tree = self.tree('exit 0;', list_fail=True)
        self.assertEqual(self.cs.check_checkpatch(tree, self.without_notes), [])


class FilesTest(Isolated):

    def setUp(self):
        super().setUp()
        self.cs = load_check_series()

    def test_touched_files_in_order_once(self):
        one = self.tmp / '1.patch'
        one.write_text('--- a/mm/vmscan.c\n+++ b/mm/vmscan.c\n@@ -1 +1 @@\n'
                       '--- /dev/null\n+++ b/mm/tests/new_kunit.c\n'
                       '--- a/mm/gone.c\n+++ /dev/null\n')
        two = self.tmp / '2.patch'
        two.write_text('+++ b/include/linux/swap.h\n+++ b/mm/vmscan.c\n'
                       ' +++ b/not/a/header.c\n')
        self.assertEqual(self.cs.touched_files([one, two]),
                         ['mm/vmscan.c', 'mm/tests/new_kunit.c',
                          'include/linux/swap.h'])

    def test_w1_warnings_in_touched_files_only(self):
        files = ['mm/vmscan.c', 'mm/tests/vmscan_isolation_kunit.c']
        output = '\n'.join([
            '  CC      mm/vmscan.o',
            '../mm/vmscan.c:120:6: warning: no previous prototype for '
            '\u2018f\u2019 [-Wmissing-prototypes]',
            '/src/linux/mm/tests/vmscan_isolation_kunit.c:7:1: warning: '
            'unused variable \u2018x\u2019',
            'In file included from mm/vmscan.c:7:',
            'include/linux/mm.h:3:4: warning: in a header the series does '
            'not touch',
            'xmm/vmscan.c:1:1: warning: another file whose name ends alike',
            'mm/vmscan.c:12:3: error: an error, not a warning',
            'mm/vmscan.c:12: warning: no column'])
        self.assertEqual(self.cs.w1_warnings(output, files),
                         output.splitlines()[1:3])


class SeriesFileTest(ScratchRepo):

    def test_a_bad_series_is_bad_input(self):
        # no prepared tree: the series is checked first
        (self.patches / 'series').write_text('0001-missing.patch\n')
        proc = self.tool('tools/check-series')
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], 'FAIL series')
        self.assertIn('0001-missing.patch does not exist', lines[1])
        self.assertEqual(lines[-1], 'check-series: 1 passed, 1 failed')
        self.assertNotIn('applies', proc.stdout)

    def test_a_patch_that_does_not_apply_is_named_with_git_s_reason(self):
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.commit_change(3, 'three again', 'mm/vmscan: change three again')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (self.patches / 'series').write_text(
            '0002-mm-vmscan-change-three-again.patch\n'
            '0001-mm-vmscan-change-three.patch\n')
        proc = self.tool('tools/check-series')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        why = lines[lines.index('FAIL applies') + 1].strip()
        self.assertEqual(why, '0002-mm-vmscan-change-three-again.patch does not '
                              'apply on top of the ones before it: error: patch '
                              'failed: mm/vmscan.c:1; error: mm/vmscan.c: patch '
                              'does not apply')

    def test_a_posting_must_apply_alone_and_be_signed_by_its_sender(self):
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.commit_change(3, 'three again', 'mm/vmscan: change three again')
        posting = self.patches / 'postings' / 'vmscan'
        posting.mkdir(parents=True)
        (posting / 'subjects').write_text('mm/vmscan: change three\n'
                                          'mm/vmscan: change three again\n')
        (posting / 'cover-letter.txt').write_text('mm/vmscan: three\n\nText.\n')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        first = posting / '0001-mm-vmscan-change-three.patch'
        lines = self.tool('tools/check-series').stdout.splitlines()
        self.assertIn('ok   applies vmscan', lines)
        self.assertIn(f'ok   signed vmscan/{first.name}', lines)
        # another sign-off than its From:'s, and the patches out of order
        first.write_text(first.read_text().replace(
            'Signed-off-by: Test Author', 'Signed-off-by: Not Me'))
        (posting / 'series').write_text('0002-mm-vmscan-change-three-again.patch\n'
                                        f'{first.name}\n')
        proc = self.tool('tools/check-series')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertIn('FAIL applies vmscan', lines)
        self.assertIn(f'FAIL signed vmscan/{first.name}', lines)
        self.assertIn('its last sign-off is not "Signed-off-by: Test Author '
                      '<author@example.org>" of its sender', proc.stdout)


class SignedTest(Isolated):

    def test_the_sender_signs_off_last_as_a_mail_reader_reads_the_from(self):
        cs = load_check_series()
        patch = self.tmp / 'p.patch'
        body = '\n\nWhy.\n\n{offs}\n---\n mm/vmscan.c | 1 +\n'
        for sender, offs, ok in (
                ('"John Q. Public" <jq@example.org>',
                 'Signed-off-by: John Q. Public <jq@example.org>', True),
                ('=?UTF-8?q?J=C3=B6rg=20M=C3=BCller?=\n <jm@example.org>',
                 'Signed-off-by: J\u00f6rg M\u00fcller <jm@example.org>', True),
                ('A <a@example.org>',
                 'Signed-off-by: A <a@example.org>\nSigned-off-by: B <b@example.org>', False),
                ('A <a@example.org>', 'Cc: a@example.org', False)):
            with self.subTest(sender=sender, offs=offs):
                patch.write_text(f'From 0 Mon Sep 17 00:00:00 2001\nFrom: {sender}\n'
                                 f'Subject: [PATCH] mm: x' + body.format(offs=offs))
                self.assertEqual(cs.check_signed(patch) == [], ok, cs.check_signed(patch))


class PostingConfigTest(ScratchRepo):

    def test_a_posting_builds_the_suites_lines_its_tree_defines(self):
        """posting_kunitconfig(): .kunitconfig's comments and the lines
        whose symbol a Kconfig file of the posting's tree defines; the
        series' other options (its suites', its RFCs') are left out."""
        work = self.tmp / 'work'
        (work / 'mm').mkdir(parents=True)
        (work / 'mm' / 'Kconfig.debug').write_text(
            'config VMSCAN_ISOLATION_KUNIT_TEST\n\tbool "x"\n'
            'menuconfig DEBUG_VM  # a comment\n\tbool "y"\n')
        (self.repo / '.kunitconfig').write_text(
            '# suites\nCONFIG_VMSCAN_ISOLATION_KUNIT_TEST=y\n'
            'CONFIG_LRU_GEN_ISOLATION_THROTTLE=y\nCONFIG_DEBUG_VM=y\n')
        cs = load_check_series()
        with mock.patch.object(cs.paths, 'REPO', self.repo):
            got = cs.posting_kunitconfig(work)
        self.assertEqual(got,
                         '# suites\nCONFIG_VMSCAN_ISOLATION_KUNIT_TEST=y\n'
                         'CONFIG_DEBUG_VM=y\n')

    def test_an_unknown_posting_is_bad_input(self):
        self.prepared()
        proc = self.tool('tools/check-series', 'postings', 'nosuch')
        self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
        self.assertIn('no posting nosuch in', proc.stderr)


class KunitconfigTest(ScratchRepo):

    def test_kunitconfig_holds_the_suites_options_and_no_other(self):
        """.kunitconfig is the suites' configuration: a suite fragment's
        line missing from it fails the check, and so does an option no
        suite needs (the e2e guest's: e2e/guest.config)."""
        top = self.repo / '.kunitconfig'
        text = top.read_text()
        self.assertIn('ok   kunitconfig', self.tool('tools/check-series').stdout.splitlines())
        top.write_text(text.replace('CONFIG_NFS_V4_1=y\n', ''))
        proc = self.tool('tools/check-series')
        self.assertIn('FAIL kunitconfig', proc.stdout.splitlines(),
                      proc.stdout + proc.stderr)
        self.assertIn('nfs_pnfs_commit.config: CONFIG_NFS_V4_1=y is not in '
                      '.kunitconfig', proc.stdout)
        top.write_text(text + 'CONFIG_BTRFS_FS=y\n')
        proc = self.tool('tools/check-series')
        self.assertIn('FAIL kunitconfig', proc.stdout.splitlines())
        self.assertIn('.kunitconfig: CONFIG_BTRFS_FS=y is in no '
                      'kunit/suites/*.config', proc.stdout)


class SubCommandTest(ScratchRepo):

    def test_out_of_range_is_refused_before_any_check(self):
        # one patch, so that the checks of a patch could run first
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        for bad in ('0', '2'):
            with self.subTest(bad=bad):
                proc = self.tool('tools/check-series', 'bisect', '--from', bad)
                self.assertEqual(proc.stdout, '')   # no check ran
                self.assertEqual(proc.returncode, 2, proc.stderr)
                self.assertEqual(proc.stderr.strip(),
                                 f'check-series: error: --from {bad}: '
                                 f'the series has 1 patch')

    def test_each_sub_command_takes_only_its_own_options(self):
        cases: list[list[str]] = [
            ['--from', '1'], ['lint', '--from', '1'], ['w1', '--from', '1'],
            ['--w1'], ['--bisect'], ['bisect', '--from', 'x'], ['nope']]
        for args in cases:
            with self.subTest(args=args):
                proc = self.tool('tools/check-series', *args)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertIn('usage: check-series', proc.stderr)
                self.assertEqual(proc.stdout, '')
        proc = self.tool('tools/check-series', 'bisect', '-h')
        self.assertIn('--from N', proc.stdout)
        proc = self.tool('tools/check-series', 'lint', '-h')
        self.assertNotIn('--from', proc.stdout)

    def test_lint_is_the_default_and_runs_only_the_quick_checks(self):
        # no build directory: w1 and bisect would fail or hold one
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        outputs = []
        cases: list[list[str]] = [[], ['lint']]
        for args in cases:
            proc = self.tool('tools/check-series', *args)
            names = [line.split()[1] for line in proc.stdout.splitlines()
                     if line.startswith(('ok', 'FAIL'))]
            self.assertEqual(names, ['series', 'kunitconfig', 'applies',
                                     'changelog', 'checkpatch'], proc.stdout)
            outputs.append(names)
        self.assertEqual(outputs[0], outputs[1])

    def test_w1_checks_the_series_then_w1_only(self):
        self.prepared()
        proc = self.tool('tools/check-series', 'w1')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[0], 'ok   series')
        self.assertEqual(lines[1], 'FAIL w1')
        self.assertIn('no guest kernel build in', lines[2])
        self.assertIn('run tools/e2e build first', lines[2])
        self.assertEqual(lines[-1], 'check-series: 1 passed, 1 failed')

    def test_w1_that_would_compile_nothing_fails(self):
        build = self.tmp / 'build' / 'e2e'
        build.mkdir(parents=True)
        (build / '.config').write_text('CONFIG_KUNIT=y\n')
        self.prepared()
        # an empty series touches no .c file
        proc = self.tool('tools/check-series', 'w1')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines()[1:3], [
            'FAIL w1', '     the series touches no .c file: nothing to compile'])
        # a .c file without an object in the build: nothing was compiled
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        proc = self.tool('tools/check-series', 'w1')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[:2], ['ok   series', 'FAIL w1'])
        self.assertEqual(lines[2].strip(), (
            f'none of the .c files the series touches has an object in {build} '
            f'(mm/vmscan.c): nothing was compiled; build the series there '
            f'first (tools/kunit build)'))
        self.assertEqual(lines[-1], 'check-series: 1 passed, 1 failed')

    def w1_build(self) -> Path:
        """A default build directory with mm/vmscan.o only, and a prepared
        tree whose third patch changes mm/vmscan.c."""
        build = self.tmp / 'build' / 'e2e'
        (build / 'mm').mkdir(parents=True)
        (build / '.config').write_text('CONFIG_KUNIT=y\n')
        (build / 'mm' / 'vmscan.o').write_text('')
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        return build

    def test_w1_names_the_touched_c_files_it_did_not_compile(self):
        build = self.w1_build()
        (self.tree / 'mm' / 'other.c').write_text('int other;\n')
        self.git('add', 'mm/other.c')
        self.git('commit', '-q', '-m', 'mm/other: add a file\n\nWhy, what and '
                 'how it was tested.\n\nSigned-off-by: Test Author '
                 '<author@example.org>')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        # a make that only says what it was asked to build
        bin_dir = self.tmp / 'bin'
        bin_dir.mkdir()
        asked = self.tmp / 'make-args'
        (bin_dir / 'make').write_text(f'#!/bin/sh\necho "$@" >> {asked}\n')
        (bin_dir / 'make').chmod(0o755)
        proc = self.tool('tools/check-series', 'w1',
                         env={'PATH': f'{bin_dir}:{self.env["PATH"]}'})
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines(), [
            'ok   series', 'ok   w1',
            f'     not compiled on their own, no object in {build} (a file '
            f'included from another is compiled through it): mm/other.c',
            'check-series: 2 passed, 0 failed'])
        args = asked.read_text().split()
        self.assertIn('W=1', args)
        self.assertIn('mm/vmscan.o', args)
        self.assertNotIn('mm/other.o', args)

    def fake_make(self, seconds=0):
        """A make on PATH that writes its arguments to self.tmp/make-args
        (and sleeps @seconds); the PATH to run it with."""
        bin_dir = self.tmp / 'bin'
        bin_dir.mkdir(exist_ok=True)
        (bin_dir / 'make').write_text(
            f'#!/bin/sh\necho "$@" >> {self.tmp / "make-args"}\nsleep {seconds}\n')
        (bin_dir / 'make').chmod(0o755)
        return f'{bin_dir}:{self.env["PATH"]}'

    def test_bisect_builds_only_a_tree_that_is_the_series(self):
        # review F12: it built the tree's commits under the series' names
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        path = self.fake_make()
        (self.tree / 'mm' / 'vmscan.c').write_text('edited, not committed\n')
        proc = self.tool('tools/check-series', 'bisect', env={'PATH': path})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[:2], ['ok   series', 'FAIL builds'])
        self.assertIn('is not base + the series of kernel-patches/: uncommitted '
                      'changes (mm/vmscan.c)', lines[2])
        self.assertEqual(lines[-1], 'check-series: 1 passed, 1 failed')
        self.git('checkout', '-q', '--', 'mm/vmscan.c')
        # the same number of commits, one of them reworded and not exported
        self.git('commit', '-q', '--amend', '-m', 'mm/vmscan: change three, '
                 'reworded\n\nWhy, what and how.\n\nSigned-off-by: Test '
                 'Author <author@example.org>')
        proc = self.tool('tools/check-series', 'bisect', env={'PATH': path})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertIn("1 commit(s) that are not in kernel-patches/ "
                      "(", proc.stdout)
        self.assertIn('mm/vmscan: change three, reworded)', proc.stdout)
        self.assertIn('export the work (tools/export), or bring the tree to '
                      'the series (tools/prepare)', ' '.join(proc.stdout.split()))
        self.assertFalse((self.tmp / 'make-args').exists())
        # the series exported: it builds
        self.assertEqual(self.tool('tools/export').returncode, 0)
        proc = self.tool('tools/check-series', 'bisect', env={'PATH': path})
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines(), [
            'ok   series', 'ok   builds 0001-mm-vmscan-change-three-reworded.patch',
            'check-series: 2 passed, 0 failed'])

    def test_bisect_counts_its_prefixes_and_beats_while_make_builds(self):
        import contextlib
        import io
        import os
        from unittest import mock
        import kunitpy
        self.prepared()
        for n in (3, 5):
            self.commit_change(n, f'line {n} changed', f'mm/vmscan: change {n}')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        patches = sorted(self.patches.glob('0*.patch'))
        tool = load_check_series()
        beats, outs = [], []
        real = kunitpy.Heartbeat

        def heartbeat(build):
            outs.append(io.StringIO())
            beat = real(build, out=outs[-1], period=0.05)
            beats.append(beat)
            return beat

        # more CPUs allowed than os.cpu_count() says: -j must be these
        cpus = set(range((os.cpu_count() or 1) + 3))
        err = io.StringIO()
        env = {**self.env, 'PATH': self.fake_make(seconds=1)}
        with mock.patch.dict(os.environ, env), \
                mock.patch.object(os, 'sched_getaffinity', return_value=cpus), \
                mock.patch.object(kunitpy, 'Heartbeat', side_effect=heartbeat), \
                contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(err):
            report = tool.Report()
            try:
                tool.check_bisect(self.tree, patches, report, start=2)
            finally:
                kunitpy._HELD.close()
        self.assertEqual((report.passed, report.failed), (1, 0))
        self.assertIn(f'check-series: bisect 2/2: building up to {patches[1].name}',
                      err.getvalue())
        self.assertNotIn('bisect 1/2', err.getvalue())
        self.assertEqual(len(beats), 1)
        self.assertEqual(beats[0].build, self.tmp / 'build' / 'bisect')
        self.assertIn('still building after 0 min', outs[0].getvalue())
        args = (self.tmp / 'make-args').read_text().splitlines()
        self.assertEqual([a.split()[-1] for a in args],
                         ['olddefconfig', f'-j{len(cpus)}'])

    def shard(self, *args, make=None):
        """Three patches exported; bisect with @args, make a fake
        (@make: its shell script, default one that succeeds)."""
        self.prepared()
        for n in (3, 5, 7):
            self.commit_change(n, f'line {n} changed', f'mm/vmscan: change {n}')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        path = self.fake_make()
        if make:
            (self.tmp / 'bin' / 'make').write_text(make)
        return self.tool('tools/check-series', 'bisect', *args, env={'PATH': path})

    def kcidb_of(self, results):
        import json
        import kcidb
        data = json.loads((results / 'kcidb.json').read_text())
        self.assertEqual(kcidb.problems(data) + kcidb.references(data), [])
        return data, kcidb.tally(data)

    def test_a_bisect_shard_builds_its_prefixes_and_writes_them_as_kcidb(self):
        results = self.tmp / 'shard'
        proc = self.shard('--from', '2', '--to', '2', '--results', results)
        self.assertEqual(proc.returncode, 0, proc.stdout + proc.stderr)
        patches = sorted(self.patches.glob('0*.patch'))
        self.assertEqual(proc.stdout.splitlines(), [
            'ok   series', f'ok   builds {patches[1].name}',
            'check-series: 2 passed, 0 failed'])
        # one prefix built: olddefconfig and the build
        self.assertEqual(len((self.tmp / 'make-args').read_text().splitlines()), 2)
        data, counts = self.kcidb_of(results)
        self.assertEqual(counts, (1, 0, 0))
        [checkout], [build] = data['checkouts'], data['builds']
        commit = self.git('rev-parse', 'HEAD~1')
        self.assertEqual(checkout['id'], f'reclaim:{commit}')
        self.assertEqual(checkout['git_commit_hash'], self.git('rev-parse', 'kbranch/base'))
        self.assertEqual(checkout['misc']['patches'], [p.name for p in patches[:2]])
        self.assertTrue(build['valid'])
        self.assertTrue(build['id'].endswith(':bisect-02'))
        self.assertEqual(build['log_url'], (results / 'build-02.log').as_uri())
        self.assertIn('olddefconfig', (results / 'build-02.log').read_text())

    def test_a_prefix_that_does_not_build_is_a_build_that_is_not_valid(self):
        results = self.tmp / 'shard'
        proc = self.shard('--from', '3', '--results', results,
                          make='#!/bin/sh\necho "mm/vmscan.c:3: error: nope"\nexit 2\n')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        self.assertEqual(proc.stdout.splitlines()[-1], 'check-series: 1 passed, 1 failed')
        data, counts = self.kcidb_of(results)
        self.assertEqual(counts, (0, 1, 0))
        build = data['builds'][0]
        self.assertFalse(build['valid'])
        self.assertIn('make olddefconfig failed', build['log_excerpt'])
        self.assertIn('error: nope', (results / 'build-03.log').read_text())
        self.assertIn('(exit 2)', (results / 'build-03.log').read_text())

    def test_a_tree_that_is_not_the_series_is_a_checkout_that_is_not_valid(self):
        self.prepared()
        self.commit_change(3, 'three', 'mm/vmscan: change three')
        self.assertEqual(self.tool('tools/export').returncode, 0)
        (self.tree / 'mm' / 'vmscan.c').write_text('edited, not committed\n')
        proc = self.tool('tools/check-series', 'bisect', env={'PATH': self.fake_make()})
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        # the default results directory
        data, counts = self.kcidb_of(self.tmp / 'results' / 'bisect')
        self.assertEqual(counts, (0, 1, 0))
        self.assertEqual(data['builds'], [])
        self.assertFalse(data['checkouts'][0]['valid'])
        self.assertIn('uncommitted changes', data['checkouts'][0]['log_excerpt'])

    def test_to_goes_from_from_to_the_last_patch(self):
        runs = [self.shard('--from', '2', '--to', '1')]
        runs += [self.tool('tools/check-series', 'bisect', *args)
                 for args in (['--to', '4'], ['--to', '0'])]
        for proc, message in zip(runs, ('--to 1: it goes from --from (2) to the '
                                        "series' last patch (3)", '--to 4: ',
                                        '--to 0: ')):
            with self.subTest(message=message):
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertEqual(proc.stdout, '')
                self.assertIn(f'check-series: error: {message}', proc.stderr)
        self.assertFalse((self.tmp / 'make-args').exists())

    def test_w1_runs_make_on_the_cpus_it_may_use(self):
        import contextlib
        import io
        import os
        from unittest import mock
        import kunitpy
        import tree as ktree
        self.w1_build()
        self.assertEqual(self.tool('tools/export').returncode, 0)
        tool = load_check_series()
        cpus = set(range((os.cpu_count() or 1) + 3))
        env = {**self.env, 'PATH': self.fake_make()}
        with mock.patch.dict(os.environ, env), \
                mock.patch.object(os, 'sched_getaffinity', return_value=cpus), \
                contextlib.redirect_stderr(io.StringIO()):
            try:
                problems, _ = tool.check_w1(self.tree, sorted(self.patches.glob('0*.patch')))
            finally:
                kunitpy._HELD.close()
                ktree.release_tree(self.tree)
        self.assertEqual(problems, [])
        self.assertIn(f'-j{len(cpus)}', (self.tmp / 'make-args').read_text().split())

    def test_an_empty_series_fails_the_checks_that_need_patches(self):
        self.prepared()
        proc = self.tool('tools/check-series')
        self.assertEqual(proc.returncode, 1, proc.stdout + proc.stderr)
        lines = proc.stdout.splitlines()
        self.assertEqual(lines[lines.index('FAIL applies') + 1].strip(),
                         'the series lists no patch: nothing to apply (export '
                         'the series first: tools/export)')
        for args in (['bisect'], ['bisect', '--from', '1']):
            with self.subTest(args=args):
                proc = self.tool('tools/check-series', *args)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                self.assertEqual(proc.stdout, '')      # no check ran
                self.assertEqual(proc.stderr.strip(), 'check-series: error: '
                                 'bisect: the series lists no patch: nothing '
                                 'to build')

    def test_a_bad_series_fails_w1_and_bisect_with_exit_2(self):
        (self.patches / 'series').write_text('0001-missing.patch\n')
        for command in ('w1', 'bisect'):
            with self.subTest(command=command):
                proc = self.tool('tools/check-series', command)
                self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
                lines = proc.stdout.splitlines()
                self.assertEqual(lines[0], 'FAIL series')
                self.assertEqual(lines[-1], 'check-series: 0 passed, 1 failed')


if __name__ == '__main__':
    unittest.main()
