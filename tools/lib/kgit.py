# SPDX-License-Identifier: GPL-2.0
"""git as the tools run it, on the kernel tree tools/prepare makes: its
environment, the base tag and the reviewer notes' ref, format-patch as the
series is exported, and questions about a tree (its base commit, a git
operation left half done, its kernel version)."""

import functools
import os
import re
import shutil
import subprocess
from collections.abc import Mapping
from pathlib import Path

from cli import EXIT_ENV, EXIT_FAIL, ToolError
from paths import StrPath

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


# What `git rev-parse --local-env-vars` prints (git 2.39), for a machine
# where it cannot be asked: git itself is missing, and git() says so.
LOCAL_ENV_VARS = (
    'GIT_ALTERNATE_OBJECT_DIRECTORIES', 'GIT_CONFIG', 'GIT_CONFIG_PARAMETERS',
    'GIT_CONFIG_COUNT', 'GIT_OBJECT_DIRECTORY', 'GIT_DIR', 'GIT_WORK_TREE',
    'GIT_IMPLICIT_WORK_TREE', 'GIT_GRAFT_FILE', 'GIT_INDEX_FILE',
    'GIT_NO_REPLACE_OBJECTS', 'GIT_REPLACE_REF_BASE', 'GIT_PREFIX',
    'GIT_INTERNAL_SUPER_PREFIX', 'GIT_SHALLOW_FILE', 'GIT_COMMON_DIR')


@functools.cache
def local_env_vars() -> tuple[str, ...]:
    """The variables that tie git to one repository (GIT_DIR,
    GIT_INDEX_FILE, GIT_WORK_TREE ...), as this git names them (git
    rev-parse --local-env-vars, asked once, without them), and those of
    LOCAL_ENV_VARS."""
    clean = {k: v for k, v in os.environ.items() if not k.startswith('GIT_')}
    try:
        proc = subprocess.run(['git', 'rev-parse', '--local-env-vars'],
                              env=clean, text=True, stdout=subprocess.PIPE,
                              stderr=subprocess.DEVNULL)
    except OSError:
        return LOCAL_ENV_VARS
    named = proc.stdout.split() if proc.returncode == 0 else []
    return tuple(dict.fromkeys([*named, *LOCAL_ENV_VARS]))


def git_env(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment the tools run git in: the user's global and system
    configuration switched off (format.*, diff.*, core.abbrev ... must not
    change what is exported or compared; the tree's own config still
    applies), the C locale, no prompts, no optional locks (git status must
    not rewrite the index of a tree it is only looking at), and none of
    the variables that tie git to one repository (local_env_vars(): a
    GIT_DIR exported by a git hook, say, must not turn git -C <tree> to
    another repository).  @env is added last: a caller may set one of
    those (check-series' scratch GIT_INDEX_FILE)."""
    local = set(local_env_vars())
    full_env = {k: v for k, v in os.environ.items() if k not in local}
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


def _worktree_of(work: Path, tree: StrPath) -> bool:
    """Whether @work is a worktree of @tree's repository."""
    def common(d: StrPath) -> Path | None:
        proc = subprocess.run(['git', 'rev-parse', '--path-format=absolute',
                               '--git-common-dir'], cwd=d, text=True,
                              env=git_env(), capture_output=True)
        return Path(proc.stdout.strip()).resolve() if proc.returncode == 0 else None
    if not (work / '.git').exists():
        return False
    mine = common(work)
    return mine is not None and mine == common(tree)


def worktree(tree: StrPath, work: Path, rev: str) -> Path:
    """A worktree of @tree at @work, its files those of @rev as committed:
    made, or made again when @work is not a worktree of @tree (a tree
    prepared anew, a directory left behind); edits and untracked files in
    it are gone.  Returns @work."""
    if work.exists() and not _worktree_of(work, tree):
        shutil.rmtree(work)
    if not work.exists():
        git(tree, 'worktree', 'prune')
        git(tree, 'worktree', 'add', '--detach', str(work), rev)
    git(work, 'checkout', '-q', '--detach', '--force', rev)
    git(work, 'reset', '-q', '--hard', rev)
    git(work, 'clean', '-fdq')
    return work
