# SPDX-License-Identifier: GPL-2.0
"""Fixtures for the tools' tests: a tiny fake kernel tarball, a scratch copy
of the repository with its own kernel-patches/, and helpers to run the real
command-line tools against them.  Nothing here touches the real kernel tree,
build directory or results."""

import hashlib
import importlib.machinery
import importlib.util
import os
import shutil
import signal
import subprocess
import tarfile
import tempfile
import unittest
from pathlib import Path
from unittest import mock

REPO = Path(__file__).resolve().parents[2]

DEBIAN_GITIGNORE = """.*
*.o
#
# Debian packaging: ignore everything at the top level, since it isn't
# included in our repository
#
/*
!/debian/
"""

VMSCAN = ''.join(f'line {i}\n' for i in range(1, 41))


def load_tool(path, name):
    """The extensionless tool at @path in the repository, imported as the
    module @name (its main() does not run), for tests of its functions."""
    loader = importlib.machinery.SourceFileLoader(name, str(REPO / path))
    spec = importlib.util.spec_from_loader(name, loader)
    assert spec is not None
    module = importlib.util.module_from_spec(spec)
    loader.exec_module(module)
    return module


def default_sigint():
    """A child's preexec_fn: SIGINT as a terminal's shell gives it, whatever
    the test run inherited (a background job of a script ignores it, and a
    Python tool started so never turns Ctrl-C into KeyboardInterrupt)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def make_tarball(path, sublevel=118):
    """A linux-source-like tarball: one top-level directory, a Makefile with
    the version, Debian's .gitignore and a file to patch."""
    with tempfile.TemporaryDirectory() as tmp:
        top = Path(tmp) / 'linux-source-6.12'
        (top / 'mm').mkdir(parents=True)
        (top / 'Makefile').write_text(
            f'# SPDX-License-Identifier: GPL-2.0\nVERSION = 6\nPATCHLEVEL = 12\n'
            f'SUBLEVEL = {sublevel}\nEXTRAVERSION =\n')
        (top / '.gitignore').write_text(DEBIAN_GITIGNORE)
        (top / 'MAINTAINERS').write_text('MEMORY MANAGEMENT\nF:\tmm/\n')
        (top / 'mm' / 'vmscan.c').write_text(VMSCAN)
        with tarfile.open(path, 'w:xz') as tar:
            tar.add(top, arcname='linux-source-6.12')
    return path


def snapshot(root, with_git=True):
    """Hash of every file under root and of the file list; .git included
    unless with_git is false."""
    digest = hashlib.sha256()
    for path in sorted(Path(root).rglob('*')):
        rel = str(path.relative_to(root))
        if not with_git and (rel == '.git' or rel.startswith('.git/')):
            continue
        digest.update(rel.encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def isolated_environ(home):
    """os.environ without what ties a test to this machine and its user:
    HOME is home (an empty directory), the XDG directories are inside it,
    no GIT_* (GIT_CONFIG_GLOBAL, GIT_DIR ...) or RECLAIM_* variable is
    inherited, and git reads no system configuration."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(('GIT_', 'RECLAIM_', 'XDG_'))
           and k != 'CCACHE_DIR'}
    env.update({'HOME': str(home),
                'XDG_CONFIG_HOME': str(home / '.config'),
                'XDG_CACHE_HOME': str(home / '.cache'),
                'GIT_CONFIG_NOSYSTEM': '1'})
    return env


class Isolated(unittest.TestCase):
    """A test with a temporary directory of its own (self.tmp, removed
    afterwards) and its own empty HOME in it (self.home): os.environ is
    isolated_environ(self.home) while the test runs."""

    def setUp(self):
        self.tmp = Path(tempfile.mkdtemp(prefix='kbranch-test-'))
        self.addCleanup(shutil.rmtree, self.tmp, ignore_errors=True)
        self.home = self.tmp / 'home'
        self.home.mkdir()
        patcher = mock.patch.dict(os.environ, isolated_environ(self.home),
                                  clear=True)
        patcher.start()
        self.addCleanup(patcher.stop)


class ScratchRepo(Isolated):
    """A copy of the repository's tools in a temporary directory, with an
    empty series, a BASE for the fake tarball, and every path the tools use
    pointed inside the temporary directory (HOME included: see Isolated)."""

    def setUp(self):
        super().setUp()
        self.repo = self.tmp / 'repo'
        for part in ('tools', 'ci', 'kunit', 'e2e'):
            shutil.copytree(REPO / part, self.repo / part,
                            ignore=shutil.ignore_patterns('__pycache__'))
        shutil.copy(REPO / '.kunitconfig', self.repo / '.kunitconfig')
        self.patches = self.repo / 'kernel-patches'
        self.patches.mkdir()
        (self.patches / 'series').write_text('')
        self.write_base()
        self.tarball = make_tarball(self.tmp / 'linux-source-6.12.tar.xz')
        self.tree = self.tmp / 'cache' / 'linux'
        self.env = dict(os.environ)
        self.env.update({
            'RECLAIM_CACHE': str(self.tmp / 'cache'),
            'RECLAIM_TREE': str(self.tree),
            'RECLAIM_TARBALL': str(self.tarball),
            'RECLAIM_RESULTS': str(self.tmp / 'results'),
            'RECLAIM_BUILD_DIR': str(self.tmp / 'build'),
            'GIT_AUTHOR_NAME': 'Test Author',
            'GIT_AUTHOR_EMAIL': 'author@example.org',
            'GIT_COMMITTER_NAME': 'Test Author',
            'GIT_COMMITTER_EMAIL': 'author@example.org',
        })

    def write_base(self, version='6.12.118', package='linux-source-6.12'):
        (self.patches / 'BASE').write_text(
            f'PACKAGE={package}\nVERSION={version}\n'
            f'DEBIAN_VERSION={version}-1~deb12u1\n')

    def tool(self, name, *args, env=None):
        """Runs repo/<name> (tools/prepare, tools/run-suites ...)."""
        return subprocess.run([str(self.repo / name), *map(str, args)],
                              cwd=self.repo, env={**self.env, **(env or {})},
                              text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, preexec_fn=default_sigint)

    def install_fake_kunit(self):
        """tools/tests/fake_kunit.py as the prepared tree's kunit.py, kept
        out of git status (not work of the developer's)."""
        kunit_dir = self.tree / 'tools' / 'testing' / 'kunit'
        kunit_dir.mkdir(parents=True)
        shutil.copy(Path(__file__).resolve().parent / 'fake_kunit.py',
                    kunit_dir / 'kunit.py')
        (kunit_dir / 'fake_lib_path').write_text(str(self.repo / 'tools' / 'lib') + '\n')
        with open(self.tree / '.git' / 'info' / 'exclude', 'a') as f:
            f.write('/tools/testing/kunit/\n')
        return kunit_dir

    def git(self, *args, cwd=None):
        return subprocess.run(['git', '-C', str(cwd or self.tree), *args],
                              env=self.env, text=True, check=True,
                              stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE).stdout.strip()

    def commit_change(self, line_no, text, subject):
        """Commits a one-line change to mm/vmscan.c in the tree."""
        path = self.tree / 'mm' / 'vmscan.c'
        lines = path.read_text().splitlines(keepends=True)
        lines[line_no - 1] = text + '\n'
        path.write_text(''.join(lines))
        self.git('commit', '-q', '-a', '-m',
                 f'{subject}\n\nWhy it changes, and how it was tested.\n\n'
                 f'Signed-off-by: Test Author <author@example.org>')

    def prepared(self):
        proc = self.tool('tools/prepare')
        self.assertEqual(proc.returncode, 0, proc.stderr)
        return proc
