# SPDX-License-Identifier: GPL-2.0
"""The host's Debian packages: installing what the branch needs from
Debian, and nothing else (tools/setup, and tools/kunit and tools/e2e
unless --no-setup)."""

import os
import shutil
import subprocess
from typing import Callable

import cli
import series
from cli import ToolError

# What the tools need from Debian, beyond the kernel source package.
PACKAGES = ['qemu-system-x86', 'gcc', 'make', 'bc', 'flex', 'bison',
            'libelf-dev', 'libssl-dev', 'cpio', 'python3', 'ccache', 'git',
            'perl', 'xz-utils',
            # scripts/checkpatch.pl runs scripts/spdxcheck.py with Debian's
            # python3, which needs these two modules.
            'python3-ply', 'python3-git',
            # tools/lint checks the tools' own Python with them.
            'flake8', 'mypy',
            # the tools' tests read .gitlab-ci.yml with it.
            'python3-yaml']


def installed_version(package: str) -> str | None:
    """The installed version of a Debian package, or None."""
    if not shutil.which('dpkg-query'):
        return None
    proc = subprocess.run(['dpkg-query', '-W', '-f=${Status} ${Version}',
                           package], stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, text=True)
    words = proc.stdout.split()
    if proc.returncode != 0 or words[:3] != ['install', 'ok', 'installed']:
        return None
    return words[3] if len(words) > 3 else ''


def missing(base: series.Base) -> list[str]:
    """Packages to install: the tools' packages, and the kernel source at the
    version BASE pins (or any version, if that one is not to be had)."""
    want = [p for p in PACKAGES if installed_version(p) is None]
    if installed_version(base.package) is None:
        want.append(base.package)
    return want


def _apt(args: list[str],
         log: Callable[[str], object]) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DEBIAN_FRONTEND='noninteractive')
    cmd = ['apt-get', *args]
    if os.geteuid() != 0:
        if not shutil.which('sudo'):
            raise ToolError(f'not root and no sudo: run as root, or install '
                            f'by hand: apt-get {" ".join(args)}',
                            cli.EXIT_ENV)
        cmd = ['sudo', '-E', *cmd]
    log(f'$ {" ".join(cmd)}')
    return subprocess.run(cmd, env=env, stdout=subprocess.PIPE,
                          stderr=subprocess.STDOUT, text=True)


def _apt_errors(proc: subprocess.CompletedProcess[str]) -> str:
    """apt's own reason: its E: lines, else its last line."""
    lines = [line.strip() for line in proc.stdout.splitlines() if line.strip()]
    errors = [line for line in lines if line.startswith('E:')]
    return '; '.join(errors or lines[-1:]) or f'exit code {proc.returncode}'


def install(base: series.Base, log: Callable[[str], object] = print,
            check_only: bool = False) -> list[str]:
    """Installs what is missing; returns the list of packages it installed."""
    if not shutil.which('dpkg-query'):
        raise ToolError(f'no dpkg-query: this is not a Debian system, so the '
                        f'packages cannot be checked or installed here; '
                        f'install {" ".join(PACKAGES)} and '
                        f'{base.package} (or their equivalents) by hand, then '
                        f'pass --no-setup to tools/kunit and tools/e2e',
                        cli.EXIT_ENV)
    want = missing(base)
    if not want:
        return []
    if check_only:
        raise ToolError(f'missing Debian packages: {" ".join(want)} '
                        f'(tools/setup installs them)', cli.EXIT_ENV)
    if not shutil.which('apt-get'):
        raise ToolError(f'missing packages {" ".join(want)}, and there is no '
                        f'apt-get: install them by hand (then tools/kunit and '
                        f'tools/e2e take --no-setup)', cli.EXIT_ENV)
    proc = _apt(['update', '-q'], log)
    if proc.returncode != 0:
        raise ToolError(f'apt-get update failed: {_apt_errors(proc)}',
                        cli.EXIT_ENV)
    args = ['install', '-y', '-q', '--no-install-recommends']
    pinned = [f'{p}={base.debian_version}' if p == base.package else p
              for p in want]
    proc = _apt(args + pinned, log)
    if proc.returncode != 0 and base.package in want:
        # The pinned version may have left the archive: another version
        # would be another tree than the one BASE, the KCIDB data and the
        # cover letter name
        raise ToolError(f'{base.package}={base.debian_version} (kernel-patches/'
                        f'BASE) could not be installed: {_apt_errors(proc)}; '
                        f'nothing else was installed in its place: install it '
                        f'by hand (snapshot.debian.org keeps every version), '
                        f'or move BASE to the version apt has once the series '
                        f'applies and passes there', cli.EXIT_ENV)
    if proc.returncode != 0:
        raise ToolError(f'apt-get install {" ".join(want)} failed: '
                        f'{_apt_errors(proc)}', cli.EXIT_ENV)
    still = missing(base)
    if still:
        raise ToolError(f'still missing after apt-get: {" ".join(still)}',
                        cli.EXIT_ENV)
    return want
