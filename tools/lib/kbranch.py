# SPDX-License-Identifier: GPL-2.0
"""Shared code of the reclaim-deadlock branch tools.

Paths, the pinned base (kernel-patches/BASE), the series file and small git
helpers.  Every tool reports problems by raising ToolError; main() wrappers
print its message as one line prefixed with the tool's name and exit with its
code, so that a user sees what went wrong and what to do next.
"""

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar, NoReturn

REPO = Path(__file__).resolve().parents[2]
# A path as the tools take one: a Path, or a str from the environment.
StrPath = str | os.PathLike[str]
# Where a function says what it does: print, or kbranch.info under a name.
Log = Callable[[str], object]
PATCH_DIR = REPO / 'kernel-patches'

# Exit codes shared by all tools (documented in README.md).
EXIT_OK = 0
EXIT_FAIL = 1       # tests failed, or the checked thing is wrong
EXIT_USAGE = 2      # bad arguments or bad input files
EXIT_ENV = 3        # the environment is missing something (package, tree)
EXIT_REFUSED = 4    # refused to touch a kernel tree holding work

# The tag the prepare tool puts on the base commit (the tarball, one commit,
# the root of the tree's history); the series applies on it.
TAG_BASE = 'kbranch/base'
# Notes for reviewers (checkpatch justifications...): git notes on the
# tree's commits, which the series carries below each patch's --- line.
NOTES = 'kbranch'
NOTES_REF = f'refs/notes/{NOTES}'

# Fixed identity and dates for the base commits, so that every machine gets
# the same base commit ids and the series' commits above them.
BASE_ENV = {
    'GIT_AUTHOR_NAME': 'kbranch',
    'GIT_AUTHOR_EMAIL': 'kbranch@localhost',
    'GIT_COMMITTER_NAME': 'kbranch',
    'GIT_COMMITTER_EMAIL': 'kbranch@localhost',
    'GIT_AUTHOR_DATE': '2000-01-01T00:00:00Z',
    'GIT_COMMITTER_DATE': '2000-01-01T00:00:00Z',
}

# What the tools need from Debian, beyond the kernel source package.
PACKAGES = ['qemu-system-x86', 'gcc', 'make', 'bc', 'flex', 'bison',
            'libelf-dev', 'libssl-dev', 'cpio', 'python3', 'ccache', 'git',
            'perl', 'xz-utils',
            # scripts/checkpatch.pl runs scripts/spdxcheck.py with Debian's
            # python3, which needs these two modules.
            'python3-ply', 'python3-git',
            # tools/lint checks the tools' own Python with them.
            'flake8', 'mypy']


class ToolError(Exception):
    """A failure with a message for the user and an exit code."""

    def __init__(self, message: str, code: int = EXIT_FAIL) -> None:
        super().__init__(message)
        self.code = code


def run_main(name: str, main: Callable[[], int]) -> NoReturn:
    """Runs main(), turning ToolError into one line on stderr and its code."""
    try:
        sys.exit(main())
    except ToolError as err:
        print(f'{name}: error: {err}', file=sys.stderr)
        sys.exit(err.code)
    except KeyboardInterrupt:
        print(f'{name}: interrupted', file=sys.stderr)
        sys.exit(130)


def info(name: str, message: str) -> None:
    print(f'{name}: {message}', file=sys.stderr, flush=True)


# --- paths ---------------------------------------------------------------

def cache_dir() -> Path:
    """RECLAIM_CACHE, or ${XDG_CACHE_HOME:-~/.cache}/reclaim-kunit."""
    env = os.environ.get('RECLAIM_CACHE')
    if env:
        return Path(env)
    xdg = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(xdg) / 'reclaim-kunit'


def tree_dir() -> Path:
    """RECLAIM_TREE, or <cache>/linux."""
    env = os.environ.get('RECLAIM_TREE')
    return Path(env) if env else cache_dir() / 'linux'


def build_dir(variant: str = 'default') -> Path:
    """RECLAIM_BUILD_DIR/<variant>, or <cache>/build/<variant>."""
    env = os.environ.get('RECLAIM_BUILD_DIR')
    root = Path(env) if env else cache_dir() / 'build'
    return root / variant


def ccache_dir() -> Path:
    env = os.environ.get('CCACHE_DIR')
    return Path(env) if env else cache_dir() / 'ccache'


def results_dir() -> Path:
    """RECLAIM_RESULTS, or results/ in the repository (ignored by git)."""
    env = os.environ.get('RECLAIM_RESULTS')
    return Path(env) if env else REPO / 'results'


# --- the pinned base and the series ----------------------------------------

@dataclass(frozen=True)
class Base:
    """kernel-patches/BASE: which package and kernel version the series
    needs (its PACKAGE, VERSION and DEBIAN_VERSION)."""

    KEYS: ClassVar[tuple[str, ...]] = ('PACKAGE', 'VERSION', 'DEBIAN_VERSION')

    package: str
    version: str
    debian_version: str

    @classmethod
    def load(cls, path: StrPath | None = None) -> 'Base':
        path = Path(path) if path else PATCH_DIR / 'BASE'
        try:
            text = path.read_text()
        except OSError as err:
            raise ToolError(f'cannot read {path}: {err.strerror}', EXIT_USAGE)
        values: dict[str, str] = {}
        for num, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            key, sep, value = line.partition('=')
            if not sep or key not in cls.KEYS or not value:
                raise ToolError(f'{path}:{num}: expected one of '
                                f'{", ".join(k + "=..." for k in cls.KEYS)}, '
                                f'got {line!r}', EXIT_USAGE)
            if key in values:
                raise ToolError(f'{path}:{num}: {key} is given twice '
                                f'({values[key]!r}, then {value!r}): keep '
                                f'one', EXIT_USAGE)
            values[key] = value
        missing = [k for k in cls.KEYS if k not in values]
        if missing:
            raise ToolError(f'{path}: missing {", ".join(missing)}', EXIT_USAGE)
        if not re.fullmatch(r'\d+\.\d+\.\d+', values['VERSION']):
            raise ToolError(f'{path}: VERSION must look like 6.12.118, got '
                            f'{values["VERSION"]!r}', EXIT_USAGE)
        return cls(values['PACKAGE'], values['VERSION'],
                   values['DEBIAN_VERSION'])

    def tarball(self) -> Path:
        """RECLAIM_TARBALL, or the path Debian's package installs."""
        env = os.environ.get('RECLAIM_TARBALL')
        return Path(env) if env else Path('/usr/src') / f'{self.package}.tar.xz'

    def describe(self) -> str:
        return f'{self.package} {self.version} ({self.debian_version})'


def read_series(patch_dir: StrPath | None = None) -> list[Path]:
    """Returns the patch file names listed in series, in order.

    Every name must exist and every *.patch file must be listed: a patch that
    is on disk but not in series (or the reverse) is a mistake that would
    silently change what gets tested.  The cover letter (COVER_LETTER) is
    not a patch: never listed, never applied.
    """
    patch_dir = Path(patch_dir) if patch_dir else PATCH_DIR
    series = patch_dir / 'series'
    try:
        lines = series.read_text().splitlines()
    except OSError as err:
        raise ToolError(f'cannot read {series}: {err.strerror}', EXIT_USAGE)
    names: list[str] = []
    for num, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if '/' in line or not line.endswith('.patch') or line == COVER_LETTER:
            raise ToolError(f'{series}:{num}: {line!r} is not a patch file '
                            f'name in kernel-patches/', EXIT_USAGE)
        if not (patch_dir / line).is_file():
            raise ToolError(f'{series}:{num}: {line} does not exist',
                            EXIT_USAGE)
        if line in names:
            raise ToolError(f'{series}:{num}: {line} is listed twice',
                            EXIT_USAGE)
        names.append(line)
    unlisted = sorted(p.name for p in patch_dir.glob('*.patch')
                      if p.name not in names and p.name != COVER_LETTER)
    if unlisted:
        raise ToolError(f'{series} does not list {", ".join(unlisted)}; '
                        f'export the series again (tools/export) or delete '
                        f'the stray file', EXIT_USAGE)
    return [patch_dir / n for n in names]


# --- git -------------------------------------------------------------------

def git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the tools run git in: the user's global and system
    configuration switched off (format.*, diff.*, core.abbrev ... must not
    change what is exported or compared; the tree's own config still
    applies), the C locale, no prompts, no optional locks (git status must
    not rewrite the index of a tree it is only looking at)."""
    full_env = dict(os.environ)
    full_env.update({'LC_ALL': 'C', 'GIT_TERMINAL_PROMPT': '0',
                     'GIT_OPTIONAL_LOCKS': '0',
                     'GIT_CONFIG_GLOBAL': os.devnull,
                     'GIT_CONFIG_NOSYSTEM': '1'})
    if env:
        full_env.update(env)
    return full_env


# What git says when the environment is wrong, not the request: tree is not
# a repository (or does not exist, or belongs to another user).
GIT_ENV_ERRORS = ('not a git repository', 'cannot change to',
                  'dubious ownership')


def git(tree: StrPath, *args: str, env: Mapping[str, str] | None = None,
        check: bool = True, capture: bool = True,
        input: str | None = None) -> str:
    """Runs git in tree; returns stdout (right-stripped) or raises ToolError
    with git's reason: EXIT_ENV if git is not installed or tree is no
    repository git can use, EXIT_FAIL for any other failure."""
    full_env = git_env(env)
    try:
        proc = subprocess.run(['git', '-C', str(tree), *args], env=full_env,
                              input=input, text=True,
                              stdout=subprocess.PIPE if capture else None,
                              stderr=subprocess.PIPE if capture else None)
    except FileNotFoundError:
        raise ToolError('git is not installed (tools/setup installs it)',
                        EXIT_ENV) from None
    if check and proc.returncode != 0:
        err = [line for line in (proc.stderr or '').splitlines()
               if line.strip()]
        said = [line for line in err if line.startswith(('fatal:', 'error:'))]
        why = said[0] if said else err[-1] if err else \
            f'exit code {proc.returncode}'
        code = EXIT_ENV if any(e in line for line in err
                               for e in GIT_ENV_ERRORS) else EXIT_FAIL
        raise ToolError(f'git {" ".join(args[:2])} failed in {tree}: {why}',
                        code)
    # rstrip only: porcelain formats start lines with a space.
    return (proc.stdout or '').rstrip() if capture else ''


def rev(tree: StrPath, name: str) -> str | None:
    """The commit id of name in tree, or None."""
    out = git(tree, 'rev-parse', '--verify', '-q', f'{name}^{{commit}}',
              check=False)
    return out or None


# git format-patch as the export tool runs it (the tree's own configuration
# cannot change these).
FORMAT_PATCH = ['-c', 'core.abbrev=12', '-c', 'diff.noprefix=false',
                '-c', 'diff.mnemonicPrefix=false', '-c', 'format.signOff=false',
                'format-patch', '--zero-commit', '--no-thread', '--abbrev=12',
                '--suffix=.patch']


def format_patches(tree: StrPath, rev_range: str,
                   outdir: StrPath) -> list[Path]:
    """git format-patch exactly as the export tool writes the series."""
    git(tree, *FORMAT_PATCH, '--no-signature', '-N', '--no-cover-letter',
        f'--notes={NOTES}', '--output-directory', str(outdir), rev_range)
    return sorted(Path(outdir).glob('*.patch'))


def patch_notes(text: str) -> str:
    """The reviewer notes of a patch: the "Notes (kbranch):" block that
    git format-patch --notes writes below the --- line, de-indented; '' if
    there is none."""
    lines = text.splitlines()
    try:
        start = lines.index('---')
    except ValueError:
        return ''
    header = f'Notes ({NOTES}):'
    for i in range(start + 1, min(start + 3, len(lines))):
        if lines[i] == header:
            break
    else:
        return ''
    notes = []
    for line in lines[i + 1:]:
        if line.startswith('    '):
            notes.append(line[4:])
        elif line == '':
            notes.append('')
        else:
            break
    return '\n'.join(notes).strip('\n')


def base_commit(tree: StrPath) -> str:
    """The commit id of the base (TAG_BASE) of a kernel tree that
    tools/prepare made; raises as require_prepared() for any other tree."""
    base = rev(tree, TAG_BASE) if (Path(tree) / '.git').is_dir() else None
    if base is None:
        raise ToolError(f'no prepared kernel tree at {tree}: run '
                        f'tools/prepare first', EXIT_ENV)
    return base


def require_prepared(tree: StrPath) -> None:
    """Raises unless tree is a kernel tree that tools/prepare made."""
    base_commit(tree)


def operation_in_progress(tree: StrPath) -> str | None:
    """Names a git am/rebase/merge/cherry-pick left half done, or None."""
    gitdir = Path(git(tree, 'rev-parse', '--absolute-git-dir'))
    for marker, what in (('rebase-apply', 'git am or rebase'),
                         ('rebase-merge', 'git rebase'),
                         ('MERGE_HEAD', 'git merge'),
                         ('CHERRY_PICK_HEAD', 'git cherry-pick')):
        if (gitdir / marker).exists():
            return what
    return None


def kernel_version(tree: StrPath) -> str | None:
    """VERSION.PATCHLEVEL.SUBLEVEL from a tree's top-level Makefile."""
    try:
        head = (Path(tree) / 'Makefile').read_text(errors='replace')[:2000]
    except OSError:
        return None
    parts = []
    for key in ('VERSION', 'PATCHLEVEL', 'SUBLEVEL'):
        m = re.search(rf'^{key}\s*=\s*(\d+)', head, re.M)
        if not m:
            return None
        parts.append(m.group(1))
    return '.'.join(parts)


def which(program: str) -> str | None:
    return shutil.which(program)


# The series' cover letter, which tools/export writes next to the patches
# (from COVER_TEXT, kept by hand in kernel-patches/): a mail, not a patch.
COVER_LETTER = '0000-cover-letter.patch'
COVER_TEXT = 'cover-letter.txt'
