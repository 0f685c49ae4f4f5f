# SPDX-License-Identifier: GPL-2.0
"""tools/check-series' arguments: --bisect-from must name a patch of the
series, and is refused before any slow check runs."""

from fixtures import ScratchRepo


class BisectFromTest(ScratchRepo):

    def test_out_of_range_is_refused(self):
        self.prepared()
        for bad in ('0', '2'):
            proc = self.tool('tools/check-series', '--bisect', '--bisect-from', bad)
            self.assertEqual(proc.returncode, 2, proc.stdout + proc.stderr)
            self.assertIn(f'--bisect-from {bad}: the series has 0 patches',
                          proc.stderr)
            self.assertNotIn('builds', proc.stdout)


if __name__ == '__main__':
    import unittest
    unittest.main()
