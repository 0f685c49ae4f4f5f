# SPDX-License-Identifier: GPL-2.0
"""kernel-patches/series and BASE: what the tools accept and refuse."""

import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import Isolated

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lib'))
import cli
import series


class SeriesTest(Isolated):

    def setUp(self):
        super().setUp()                 # self.tmp, removed afterwards
        self.dir = self.tmp / 'kernel-patches'
        self.dir.mkdir()

    def write(self, text, *patches):
        (self.dir / 'series').write_text(text)
        for p in patches:
            (self.dir / p).write_text('patch\n')

    def test_empty_series_is_no_patches(self):
        self.write('# nothing yet\n\n')
        self.assertEqual(series.read_series(self.dir), [])

    def test_order_is_the_series_order(self):
        self.write('0002-b.patch\n0001-a.patch\n', '0001-a.patch', '0002-b.patch')
        self.assertEqual([p.name for p in series.read_series(self.dir)],
                         ['0002-b.patch', '0001-a.patch'])

    def assertRefused(self, text):
        with self.assertRaises(cli.ToolError) as ctx:
            series.read_series(self.dir)
        self.assertEqual(ctx.exception.code, cli.EXIT_USAGE)
        self.assertIn(text, str(ctx.exception))

    def test_listed_patch_missing(self):
        self.write('0001-a.patch\n')
        self.assertRefused('0001-a.patch does not exist')

    def test_patch_not_listed(self):
        self.write('0001-a.patch\n', '0001-a.patch', '0002-stray.patch')
        self.assertRefused('does not list 0002-stray.patch')

    def test_listed_twice(self):
        self.write('0001-a.patch\n0001-a.patch\n', '0001-a.patch')
        self.assertRefused('listed twice')

    def test_not_a_patch_name(self):
        self.write('../etc/passwd\n')
        self.assertRefused('is not a patch file name')

    def test_no_series_file(self):
        self.assertRefused('cannot read')


class BaseTest(Isolated):

    def load(self, text):
        with tempfile.NamedTemporaryFile('w', suffix='BASE') as f:
            f.write(text)
            f.flush()
            return series.Base.load(f.name)

    def test_the_repository_base_is_valid(self):
        base = series.Base.load()
        self.assertEqual(base.package, 'linux-source-6.12')
        self.assertTrue(base.debian_version.startswith(base.version))

    def test_bad_lines(self):
        for text, why in (('PACKAGE=a\nVERSION=6.12\nDEBIAN_VERSION=x\n', 'VERSION must'),
                          ('PACKAGE=a\n', 'missing VERSION'),
                          ('COLOUR=blue\n', 'expected one of'),
                          ('just words\n', 'expected one of')):
            with self.subTest(text=text):
                with self.assertRaises(cli.ToolError) as ctx:
                    self.load(text)
                self.assertIn(why, str(ctx.exception))
                self.assertEqual(ctx.exception.code, cli.EXIT_USAGE)


if __name__ == '__main__':
    unittest.main()
