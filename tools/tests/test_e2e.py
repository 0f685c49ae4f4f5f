# SPDX-License-Identifier: GPL-2.0
"""tools/e2e without a kernel: its refusals (no QEMU, no build, a package
apt cannot fetch, bad arguments), the console parser, the table and the
initramfs archive."""

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from pathlib import Path

from fixtures import ScratchRepo

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / 'lib'))
import e2e  # noqa: E402

CONSOLE = """\
[    1.0] Linux version 6.12.118
E2E: policy_ms -1
E2E: params mb=64 memcg=16 headroom=48 timeout=120 threads=4
E2E: vmstat_before allocstall_normal 0
E2E: vmstat_before pgsteal_direct 10
[   30.1] ======================================================
[   30.1] WARNING: possible circular locking dependency detected
[   30.1] nfsd/123 is trying to acquire lock:
[   30.1] ffffffff (nfsd_commit){++++}-{0:0}, at: nfs_release_wait_sleep
[   50.0] INFO: task dd:140 blocked for more than 20 seconds.
E2E: result completed
E2E: write_seconds 12.50
E2E: vmstat_after allocstall_normal 7
E2E: vmstat_after pgsteal_direct 110
E2E: wait 100 20500 committed sh
E2E: wait 100 101000 timed_out nfsd
E2E: wait 100 1500 committed sh
E2E: data ok
E2E: end
"""


GOOD = """\
E2E: result completed
E2E: write_seconds 10.00
E2E: wait 100 20500 committed sh
E2E: data ok
E2E: isolated all nr_isolated_anon 0
E2E: isolated all nr_isolated_file 0
E2E: end
"""


def load_e2e_tool():
    import importlib.machinery
    import importlib.util
    loader = importlib.machinery.SourceFileLoader(
        'e2e_tool', str(Path(__file__).resolve().parents[1] / 'e2e'))
    spec = importlib.util.spec_from_loader('e2e_tool', loader)
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


class CheckShortTest(unittest.TestCase):

    def check(self, console):
        import contextlib
        import io
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            rc = load_e2e_tool().check_short(e2e.parse_console(console))
        return rc, out.getvalue()

    def test_a_good_run_passes_every_check(self):
        rc, out = self.check(GOOD)
        self.assertEqual(rc, 0, out)
        self.assertIn('e2e: 8 passed, 0 failed', out)

    def test_budget_spent_events_are_not_waits(self):
        rc, out = self.check(GOOD.replace('E2E: wait 100 20500 committed sh\n',
                                          'E2E: wait 0 0 budget_spent sh\n'))
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL release waits happened', out)

    def test_a_wait_over_its_budget_fails(self):
        rc, out = self.check(GOOD.replace('E2E: wait 100 20500 committed sh\n',
                                          'E2E: wait 40 1041000 timed_out sh\n'))
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL every release wait within its budget + 1000 ms', out)

    def test_a_wait_by_nfsd_fails(self):
        rc, out = self.check(GOOD + 'E2E: wait 100 1500 committed nfsd\n')
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL no release wait by an nfsd thread: 1 waits by nfsd', out)

    def test_no_release_wait_is_no_pass(self):
        rc, out = self.check(GOOD.replace('E2E: wait 100 20500 committed sh\n', ''))
        self.assertEqual(rc, 1, out)
        self.assertIn('FAIL release waits happened', out)

    def test_isolated_pages_left_fail(self):
        rc, out = self.check(GOOD.replace('nr_isolated_file 0', 'nr_isolated_file 32'))
        self.assertEqual(rc, 1, out)
        self.assertIn("FAIL NR_ISOLATED_* back to 0 after the run: still isolated "
                      "after the run: {'all nr_isolated_file': 32}", out)
        rc, out = self.check(GOOD.replace('E2E: isolated all nr_isolated_anon 0\n', '')
                             .replace('E2E: isolated all nr_isolated_file 0\n', ''))
        self.assertEqual(rc, 1, out)
        self.assertIn('no nr_isolated_* lines in the console', out)


class ParseTest(unittest.TestCase):

    def test_console_is_read(self):
        r = e2e.parse_console(CONSOLE)
        self.assertEqual(r['result'], 'completed')
        self.assertEqual(r['write_seconds'], 12.5)
        self.assertEqual(len(r['waits']), 3)
        self.assertEqual(r['waits'][1], {'budget_ms': 100, 'waited_us': 101000,
                                         'result': 'timed_out', 'task': 'nfsd'})
        self.assertEqual(len(r['lockdep']), 1)
        self.assertTrue(r['lockdep'][0]['nfsd_commit'])
        self.assertEqual(r['hung_task_reports'], 1)
        self.assertEqual(r['data'], 'ok')
        self.assertTrue(r['ended'])

    def test_reclaim_reports_and_lockdep_stats_are_read(self):
        r = e2e.parse_console(
            '[ 9.0] WARNING: possible memory reclaim lock inversion dependency detected\n'
            '[ 9.1] WARNING: reclaim section still open at exit or freezing!\n'
            'E2E: lockdep_stats lock-classes 1703\n'
            'E2E: lockdep_stats in-reclaim_fs_locks 12\n'
            'E2E: lockdep_stats bad\n')
        self.assertEqual([x['kind'] for x in r['lockdep']],
                         ['possible memory reclaim lock inversion dependency detected',
                          'reclaim section still open at exit or freezing!'])
        self.assertEqual(r['lockdep_stats'],
                         {'lock-classes': 1703, 'in-reclaim_fs_locks': 12})

    def test_isolated_counts_and_throttle_events_are_read(self):
        r = e2e.parse_console(
            'E2E: throttled_isolated 3\n'
            'E2E: vmstat_before workingset_refault_file 5\n'
            'E2E: vmstat_after workingset_refault_file 9\n'
            'E2E: isolated all nr_isolated_anon 0\n'
            'E2E: isolated all nr_isolated_file 32\n'
            'E2E: isolated node0 nr_isolated_file 32\n'
            'E2E: isolated node0 garbage\n')
        self.assertEqual(r['throttled_isolated'], 3)
        self.assertEqual(r['isolated'], {'all nr_isolated_anon': 0,
                                         'all nr_isolated_file': 32,
                                         'node0 nr_isolated_file': 32})
        s = e2e.summarize('bounded', [r], 64)
        self.assertEqual(s['throttled_isolated'], [3])
        self.assertEqual(s['refaults'], [4])
        self.assertEqual(s['isolated_left'], [64])

    def test_summary_and_table(self):
        r = e2e.parse_console(CONSOLE)
        s = e2e.summarize('unbounded', [r, e2e.parse_console('garbage')], 64)
        self.assertEqual(s['params'], ['nfs.release_wait_unbounded=1'])
        self.assertIsNone(s['bound_ms'])
        self.assertEqual((s['runs'], s['completed'], s['other']), (2, 1, 1))
        self.assertEqual(s['waits'], 3)
        self.assertEqual(s['waits_by_result']['timed_out'], 1)
        self.assertEqual(s['waits_by_nfsd'], 1)
        self.assertEqual(s['wait_median_ms'], 20.5)
        self.assertEqual(s['wait_max_ms'], 101.0)
        self.assertEqual(s['allocstall'], [7, 0])
        self.assertEqual(s['lockdep_nfsd_commit'], 1)
        self.assertAlmostEqual(s['throughput_mb_s'], 64 / 12.5)
        md = e2e.table([s])
        self.assertIn('| unbounded | 2 | 1 | 0 | 1 | 1 (1) | 3 (2/1) | 20.5 / 101.0 | '
                      'unbounded | 7/0 | 0/0 | 5.12 | 1/1 |', md)

    def test_cpio_is_a_newc_archive(self):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / 'root'
            (root / 'bin').mkdir(parents=True)
            (root / 'bin' / 'busybox').write_bytes(b'\x7fELF' + b'x' * 5)
            os.symlink('busybox', root / 'bin' / 'sh')
            (root / 'init').write_text('#!/bin/sh\n')
            out = Path(tmp) / 'i.cpio.gz'
            e2e.write_cpio(root, out)
            listing = subprocess.run(['cpio', '-it'], input=gzip.decompress(
                out.read_bytes()), stdout=subprocess.PIPE,
                stderr=subprocess.PIPE).stdout.decode().split()
            self.assertEqual(sorted(listing), ['bin', 'bin/busybox', 'bin/sh', 'init'])


class RefusalTest(ScratchRepo):

    def fake_bin(self, name, script):
        bindir = self.tmp / 'bin'
        bindir.mkdir(exist_ok=True)
        (bindir / name).write_text('#!/bin/sh\n' + script)
        (bindir / name).chmod(0o755)
        return bindir

    def test_no_qemu(self):
        bindir = self.fake_bin('true', 'exit 0\n')
        os.symlink(shutil.which('python3'), bindir / 'python3')
        proc = self.tool('tools/e2e', 'run', env={'PATH': f'{bindir}'})
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('qemu-system-x86_64 not found', proc.stderr)

    def test_no_build(self):
        bindir = self.fake_bin('qemu-system-x86_64', 'exit 0\n')
        proc = self.tool('tools/e2e', 'run',
                         env={'PATH': f'{bindir}:{os.environ["PATH"]}'})
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('run tools/e2e build', proc.stderr)

    def test_package_apt_cannot_fetch_is_named(self):
        bindir = self.fake_bin('apt-get', 'echo "E: Unable to locate package $2" >&2; exit 100\n')
        proc = self.tool('tools/e2e', 'initramfs',
                         env={'PATH': f'{bindir}:{os.environ["PATH"]}'})
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('apt-get download failed for busybox-static', proc.stderr)
        self.assertIn('Unable to locate package', proc.stderr)

    def test_bad_arguments(self):
        proc = self.tool('tools/e2e', 'run', '--runs', '0')
        self.assertEqual(proc.returncode, 2, proc.stderr)
        proc = self.tool('tools/e2e', 'run', '--policy', 'sometimes')
        self.assertEqual(proc.returncode, 2, proc.stderr)


if __name__ == '__main__':
    unittest.main()
