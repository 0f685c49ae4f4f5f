# SPDX-License-Identifier: GPL-2.0
"""tools/setup with fake dpkg-query and apt-get in front of the real ones:
a missing package is named, apt failures are reported, and a pinned kernel
source version that apt no longer has falls back to the current one; on a
host without dpkg-query or apt-get the message says what to do."""

import os
import sys
import unittest

from fixtures import ScratchRepo

DPKG_QUERY = """#!/bin/sh
# Everything is installed but the packages named in $FAKE_MISSING.
for p in $FAKE_MISSING; do
  [ "$p" = "$3" ] && { echo "dpkg-query: no packages found matching $3" >&2; exit 1; }
done
printf 'install ok installed 1.0'
"""

APT_GET = """#!/bin/sh
echo "apt-get $*" >> "$FAKE_LOG"
case "$1" in
  update)
    [ -n "$FAKE_UPDATE_FAILS" ] && {
      echo "Err:1 http://deb.example.org bookworm InRelease"
      echo "E: The repository 'http://deb.example.org bookworm Release' does not have a Release file."
      echo "N: Updating from such a repository can't be done securely."
      exit 100; }
    exit 0 ;;
  install)
    for a in "$@"; do case "$a" in *=*)
      [ -n "$FAKE_NO_PIN" ] && { echo "E: Version '${a#*=}' for '${a%%=*}' was not found"; exit 100; } ;;
    esac; done
    [ -n "$FAKE_APT_FAILS" ] && { echo "E: Unable to locate package $FAKE_MISSING"; exit 100; }
    exit 0 ;;
esac
exit 1
"""


class SetupTest(ScratchRepo):

    def setUp(self):
        super().setUp()
        bindir = self.tmp / 'bin'
        bindir.mkdir()
        for name, text in (('dpkg-query', DPKG_QUERY), ('apt-get', APT_GET)):
            (bindir / name).write_text(text)
            (bindir / name).chmod(0o755)
        self.log = self.tmp / 'apt.log'
        self.env['PATH'] = f'{bindir}:{os.environ["PATH"]}'
        self.env['FAKE_LOG'] = str(self.log)

    def test_all_present(self):
        proc = self.tool('tools/setup')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        self.assertIn('all packages present', proc.stdout)
        self.assertFalse(self.log.exists())     # apt never ran

    def test_check_names_the_missing_package(self):
        proc = self.tool('tools/setup', '--check',
                         env={'FAKE_MISSING': 'qemu-system-x86'})
        self.assertEqual(proc.returncode, 3)
        self.assertIn('missing Debian packages: qemu-system-x86', proc.stderr)
        self.assertFalse(self.log.exists())

    def test_apt_failure_is_reported(self):
        proc = self.tool('tools/setup', env={'FAKE_MISSING': 'qemu-system-x86',
                                             'FAKE_APT_FAILS': '1'})
        self.assertEqual(proc.returncode, 3)
        self.assertIn('apt-get install qemu-system-x86 failed', proc.stderr)
        self.assertIn('Unable to locate package', proc.stderr)

    def test_apt_update_failure_is_reported_in_apt_s_words(self):
        proc = self.tool('tools/setup', env={'FAKE_MISSING': 'qemu-system-x86',
                                             'FAKE_UPDATE_FAILS': '1'})
        self.assertEqual(proc.returncode, 3)
        self.assertEqual(proc.stderr.strip().splitlines()[-1],
                         "setup: error: apt-get update failed: E: The repository "
                         "'http://deb.example.org bookworm Release' does not have "
                         "a Release file.")

    def only(self, *names):
        """PATH: python3 and the fakes named, nothing else."""
        bindir = self.tmp / 'only'
        bindir.mkdir()
        (bindir / 'python3').symlink_to(sys.executable)
        for name in names:
            (bindir / name).symlink_to(self.tmp / 'bin' / name)
        return {'PATH': str(bindir)}

    def test_no_dpkg_names_the_packages_and_no_setup(self):
        env = self.only()
        for args in ((), ('--check',)):
            with self.subTest(args=args):
                proc = self.tool('tools/setup', *args, env=env)
                self.assertEqual(proc.returncode, 3, proc.stderr)
                err = proc.stderr.strip()
                self.assertEqual(len(err.splitlines()), 1, err)
                self.assertIn('no dpkg-query: this is not a Debian system', err)
                self.assertIn('install qemu-system-x86 gcc make', err)
                self.assertIn('linux-source-6.12 (or their equivalents) by hand, '
                              'then pass --no-setup to tools/kunit and tools/e2e',
                              err)
                self.assertFalse(self.log.exists())

    def test_no_apt_get_names_no_setup(self):
        proc = self.tool('tools/setup', env={**self.only('dpkg-query'),
                                             'FAKE_MISSING': 'bc'})
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('missing packages bc, and there is no apt-get: install '
                      'them by hand (then tools/kunit and tools/e2e take '
                      '--no-setup)', proc.stderr)

    def test_kernel_source_is_asked_for_at_the_pinned_version(self):
        proc = self.tool('tools/setup', env={'FAKE_MISSING': 'linux-source-6.12'})
        # the fake dpkg-query still says it is missing afterwards
        self.assertEqual(proc.returncode, 3)
        self.assertIn('still missing after apt-get: linux-source-6.12', proc.stderr)
        calls = self.log.read_text()
        self.assertIn('install -y -q --no-install-recommends '
                      'linux-source-6.12=6.12.118-1~deb12u1', calls)

    def test_pinned_version_gone_is_refused(self):
        """T1: another version of the kernel source is another tree than
        the one BASE names: refused, exit 3, nothing installed instead."""
        proc = self.tool('tools/setup', env={'FAKE_MISSING': 'linux-source-6.12',
                                             'FAKE_NO_PIN': '1'})
        self.assertEqual(proc.returncode, 3, proc.stderr)
        self.assertIn('linux-source-6.12=6.12.118-1~deb12u1 (kernel-patches/BASE) '
                      'could not be installed', proc.stderr)
        calls = self.log.read_text().splitlines()
        self.assertFalse(any(c.endswith('--no-install-recommends linux-source-6.12')
                             for c in calls), calls)


if __name__ == '__main__':
    unittest.main()
