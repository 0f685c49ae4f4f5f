# SPDX-License-Identifier: GPL-2.0
"""The prepared kernel tree: create it from the tarball, bring it to
base + series, and refuse to touch it when it holds work of its own; its
lock (tree_lock()): exclusive to change it, shared to build from it."""

import contextlib
import fcntl
import hashlib
import os
import re
import shlex
import shutil
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Iterator

import cli
import hostpkgs
import kgit
import paths
import series
from cli import Log, ToolError
from kgit import git, rev

# Debian's linux-source tarball ends its .gitignore with a block that ignores
# every top-level entry.  In the prepared tree that would hide every file a
# developer adds (mm/tests/foo.c needs "git add -f"), so the base commit drops
# exactly these lines and says so in its message.
DEBIAN_IGNORE_BLOCK = [
    '#',
    '# Debian packaging: ignore everything at the top level, since it isn\'t',
    '# included in our repository',
    '#',
    '/*',
    '!/debian/',
]


def _installed_version(package: str) -> str | None:
    try:
        proc = subprocess.run(['dpkg-query', '-W', '-f=${Version}', package],
                              stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                              text=True)
    except OSError:
        return None
    return proc.stdout.strip() if proc.returncode == 0 else None


def _drop_debian_ignore(tree: Path) -> bool:
    """Removes Debian's ignore-everything block; True if the file changed."""
    path = Path(tree) / '.gitignore'
    if not path.is_file():
        return False
    lines = path.read_text().split('\n')
    n = len(DEBIAN_IGNORE_BLOCK)
    for i in range(len(lines) - n + 1):
        if lines[i:i + n] == DEBIAN_IGNORE_BLOCK:
            del lines[i:i + n]
            path.write_text('\n'.join(lines))
            return True
    # A tarball with only the two rules, without the comment.
    if '/*' in lines and '!/debian/' in lines:
        lines = [line for line in lines if line not in ('/*', '!/debian/')]
        path.write_text('\n'.join(lines))
        return True
    return False


def create(base: series.Base, tree: Path, log: Log = print) -> None:
    """Extracts the tarball into tree and commits it as the base."""
    tarball = base.tarball()
    if not tarball.is_file():
        raise ToolError(f'{tarball} not found: install {base.package} '
                        f'(tools/setup installs it)', cli.EXIT_ENV)
    installed = _installed_version(base.package)
    if installed and installed != base.debian_version \
            and 'RECLAIM_TARBALL' not in os.environ:
        # the tree, the KCIDB data and the cover letter would name BASE's
        # version for another tree
        raise ToolError(f'kernel-patches/BASE pins {base.package} '
                        f'{base.debian_version}, but {installed} is installed: '
                        f'nothing was prepared; install the pinned version '
                        f'(apt-get install {base.package}={base.debian_version}), '
                        f'or move BASE to {installed} once the series applies '
                        f'and passes there', cli.EXIT_ENV)
    tree.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f'.{tree.name}.tmp-', dir=tree.parent))
    try:
        log(f'extracting {tarball} into {tree} ...')
        proc = subprocess.run(['tar', '-xf', str(tarball), '-C', str(tmp),
                               '--strip-components=1', '--no-same-owner'],
                              stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0:
            raise ToolError(f'cannot extract {tarball}: '
                            f'{proc.stderr.strip()}', cli.EXIT_ENV)
        version = kgit.kernel_version(tmp)
        if version is None:
            raise ToolError(f'{tarball} holds no kernel tree (no VERSION in '
                            f'its top-level Makefile)', cli.EXIT_ENV)
        if version != base.version:
            raise ToolError(f'kernel-patches/BASE names kernel {base.version}, '
                            f'but {tarball} holds {version}: nothing was '
                            f'prepared; install the pinned {base.package} '
                            f'{base.debian_version}, or move BASE to {version} '
                            f'once the series applies and passes there',
                            cli.EXIT_ENV)
        git(tmp, 'init', '-q', '-b', 'main')
        for key, value in (('gc.auto', '0'), ('core.autocrlf', 'false'),
                           ('kbranch.package', base.package),
                           ('kbranch.version', base.version)):
            git(tmp, 'config', key, value)
        dropped = _drop_debian_ignore(tmp)
        log('committing the tarball as the base (git add -f: Debian\'s '
            '.gitignore ignores everything) ...')
        git(tmp, 'add', '-f', '-A')
        note = ('\n\nOne change: the block Debian appends to the top-level '
                '.gitignore,\nwhich ignores every top-level entry, is dropped, '
                'so that new files\nshow up in git status and are committed '
                'with a plain git add.') if dropped else ''
        git(tmp, 'commit', '-q', '--no-verify', '-m',
            f'{base.package} {version}\n\nThe contents of {tarball.name}.'
            f'{note}', env=kgit.BASE_ENV)
        git(tmp, 'tag', kgit.TAG_BASE)
        if tree.exists():
            tree.rmdir()        # only an empty directory gets here
        tmp.rename(tree)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise


def _applied_file(tree: Path) -> Path:
    """Where tools/prepare records the commits it applied to tree: one line
    per commit, its _patch_key().  A line with one sha256 alone is the
    record of an older tools/prepare: the digest of a patch file it applied
    (_digest), still read."""
    return Path(git(tree, 'rev-parse', '--absolute-git-dir')) / 'kbranch-applied'


def _digest(patch: Path) -> str:
    """What an older tools/prepare recorded: the sha256 of a patch file."""
    return hashlib.sha256(Path(patch).read_bytes()).hexdigest()


def _stripspace(text: str) -> str:
    """The message as git am commits it (git stripspace): no trailing
    blanks, no blank lines at either end, one blank line between
    paragraphs."""
    lines: list[str] = []
    blank = False
    for line in text.split('\n'):
        line = line.rstrip()
        if not line:
            blank = bool(lines)
            continue
        if blank:
            lines.append('')
            blank = False
        lines.append(line)
    return ''.join(line + '\n' for line in lines)


def _patch_key(tree: Path, patch: Path, scratch: str) -> str:
    """What makes two patch files the same patch: 'PATCH-ID MESSAGE', the
    patch-id of its diff (git patch-id --stable: line numbers, whitespace
    and index lines do not count) and the sha256 of the author and message
    git am takes from it (git mailinfo, as am runs it in tree: the subject
    without its [PATCH ...] prefix and the changelog; not the diffstat,
    notes or signature).  A changelog reworded with the same diff is
    another patch: prepare must apply it again."""
    data = Path(patch).read_bytes()
    proc = subprocess.run(['git', '-C', str(tree), 'patch-id', '--stable'],
                          input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, env=kgit.git_env())
    ids = proc.stdout.split()
    patch_id = ids[0].decode() if proc.returncode == 0 and ids else 'no-diff'
    msg, rest = Path(scratch) / 'mailinfo.msg', Path(scratch) / 'mailinfo.diff'
    msg.unlink(missing_ok=True)
    proc = subprocess.run(['git', '-C', str(tree), 'mailinfo', str(msg),
                           str(rest)], input=data, stdout=subprocess.PIPE,
                          stderr=subprocess.DEVNULL, env=kgit.git_env())
    info: dict[str, str] = {}
    for line in proc.stdout.decode(errors='replace').splitlines():
        key, sep, value = line.partition(': ')
        if sep:
            info[key] = value
    body = msg.read_text(errors='replace') if msg.is_file() else ''
    text = (f'{info.get("Author", "")} <{info.get("Email", "")}>\n\n' +
            _stripspace(f'{info.get("Subject", "")}\n\n{body}'))
    return f'{patch_id} {hashlib.sha256(text.encode()).hexdigest()}'


def _recorded(tree: Path) -> tuple[set[str], set[str]]:
    """The keys and the older digests _applied_file() holds."""
    keys: set[str] = set()
    digests: set[str] = set()
    path = _applied_file(tree)
    if path.is_file():
        for line in path.read_text(errors='replace').splitlines():
            fields = line.split()
            if len(fields) == 2:
                keys.add(' '.join(fields))
            elif len(fields) == 1:
                digests.add(fields[0])
    return keys, digests


def _pending_work(tree: Path, patches: list[Path],
                  tmpdir: str) -> tuple[int, int, list[str], list[str]]:
    """Compares the tree's commits above the base with the series.

    A commit is a series patch when its git format-patch has the patch's
    _patch_key() (the same diff, author and message, whatever the
    formatting).  Returns (applied, stale, problems, keys): how many series
    patches the tree already holds, in order; how many commits above those
    are commits an earlier tools/prepare applied or found in the series
    and nobody changed since, or patches of the series (a series that was
    replaced, by a pull say: they may be replaced in turn); a list of
    reasons the tree holds work of its own, which names only the commits
    that are none of these; and the keys of the applied commits.
    """
    problems = []
    dirty = git(tree, 'status', '--porcelain')
    if dirty:
        files = [line[3:] for line in dirty.splitlines()]
        more = f' and {len(files) - 5} more' if len(files) > 5 else ''
        problems.append(f'uncommitted changes ({", ".join(files[:5])}{more})')
    head = rev(tree, 'HEAD')        # None on a branch without commits
    base = kgit.base_commit(tree)
    if head is None or subprocess.run(
            ['git', '-C', str(tree), 'merge-base', '--is-ancestor', base,
             head], env=kgit.git_env()).returncode != 0:
        problems.append(f'HEAD is not based on {kgit.TAG_BASE}')
        return 0, 0, problems, []
    exported = kgit.format_patches(tree, f'{base}..{head}', tmpdir)
    keys = [_patch_key(tree, p, tmpdir) for p in exported]
    applied = 0
    for key, theirs in zip(keys, patches):
        if key != _patch_key(tree, theirs, tmpdir):
            break
        applied += 1
    stale = 0
    if applied < len(exported):
        known, digests = _recorded(tree)
        known |= {_patch_key(tree, p, tmpdir) for p in patches}
        # the commits format-patch exported, in the same order
        names = git(tree, 'log', '--no-merges', '--format=%h %s', '--reverse',
                    f'{base}..{head}').splitlines()
        extra = [name for key, mine, name in
                 zip(keys[applied:], exported[applied:], names[applied:])
                 if key not in known and _digest(mine) not in digests]
        if not extra:
            stale = len(exported) - applied
        else:
            problems.append(f'{len(extra)} commit(s) that are not in '
                            f'kernel-patches/ ({"; ".join(extra[:3])}'
                            f'{" ..." if len(extra) > 3 else ""})')
    return applied, stale, problems, keys[:applied]


def series_differences(tree: Path, patches: list[Path]) -> list[str]:
    """Why @tree's commits above the base are not exactly @patches (the
    series), by _pending_work(), the test tools/prepare makes: uncommitted
    changes, commits that are not in kernel-patches/, patches of the series
    the tree does not hold, commits of an earlier series above them.  An
    empty list: the tree is base + series, nothing else."""
    with tempfile.TemporaryDirectory(prefix='kbranch-') as tmpdir:
        applied, stale, problems, _ = _pending_work(tree, patches, tmpdir)
    if stale:
        problems.append(f'{stale} commit(s) of an earlier series above the '
                        f'series\' patches')
    if applied < len(patches) and not any(p.startswith('HEAD is not')
                                          for p in problems):
        missing = patches[applied:]
        problems.append(f'{len(missing)} patch(es) of the series that are not '
                        f'its commits in order ({missing[0].name}'
                        f'{" ..." if len(missing) > 1 else ""})')
    return problems


def _record_applied(tree: Path, since: str) -> None:
    """Records the commits above since, which tools/prepare just applied."""
    with tempfile.TemporaryDirectory(prefix='kbranch-') as tmpdir:
        done = kgit.format_patches(tree, f'{since}..HEAD', tmpdir)
        keys = [_patch_key(tree, p, tmpdir) for p in done]
    _record_keys(tree, keys)


def _record_keys(tree: Path, keys: list[str]) -> None:
    """Adds to the record the keys it does not hold yet: commits that are
    series patches (applied, or found in the tree, exported by hand), so
    that when the series changes under them they are not work."""
    known, _ = _recorded(tree)
    new = [key for key in dict.fromkeys(keys) if key not in known]
    if new:
        with _applied_file(tree).open('a') as f:
            f.writelines(key + '\n' for key in new)


def unseen_patches(tree: Path, patches: list[Path], exported: list[Path],
                   tmpdir: str) -> list[str]:
    """The names of @patches (a series in kernel-patches/) that @tree never
    held: neither one of its commits now (@exported, their format-patch)
    nor one tools/prepare applied or tools/export wrote from it (the
    record, _applied_file()).  Exporting over those would remove or revert
    them (a patch pulled after the tree was prepared)."""
    known, digests = _recorded(tree)
    known |= {_patch_key(tree, p, tmpdir) for p in exported}
    return [p.name for p in patches if p.is_file()
            and _patch_key(tree, p, tmpdir) not in known
            and _digest(p) not in digests]


def record_exported(tree: Path, exported: list[Path], tmpdir: str) -> None:
    """Records the patches tools/export wrote from the tree's commits: a
    later export of an edited commit may replace them."""
    _record_keys(tree, [_patch_key(tree, p, tmpdir) for p in exported])


def _save_work(tree: Path, log: Log) -> None:
    """--force: keeps everything the reset would lose, and says where."""
    stamp = time.strftime('%Y%m%d-%H%M%S')
    if git(tree, 'status', '--porcelain'):
        git(tree, 'stash', 'push', '--include-untracked', '-q', '-m',
            f'tools/prepare --force {stamp}')
        log(f'--force: saved uncommitted changes as stash@{{0}} '
            f'("tools/prepare --force {stamp}")')
    head, base = rev(tree, 'HEAD'), kgit.base_commit(tree)
    if head is not None and head != base:
        branch = f'kbranch/backup/{stamp}'
        git(tree, 'branch', branch, head)
        log(f'--force: saved the commits above the base as branch {branch}')
    git(tree, 'reset', '-q', '--hard', base)


# --- The tree's lock (review F2) ----------------------------------------------
#
# flock(2) on the file lock_file() names, beside the tree: not in its .git, so
# that it exists before the tree does (two tools/prepare on an empty cache).
# Exclusive to change the tree: prepare() (creating it, --force's reset,
# apply_series()'s git am) and tools/export (it reads the commits and writes
# the tree's record).  Shared to build from it, or to make a worktree of it:
# ready() (tools/kunit build and run, tools/e2e build), tools/run-suites,
# tools/check-series w1 and bisect, tools/mutants.  A tool that finds it held
# the other way waits, and says once who holds it; prepare() first looks under
# a shared lock, so it waits for the builds only when the tree must change.
#
# Lock order, the same in every tool: $RECLAIM_CACHE/e2e/'s lock (tools/e2e),
# then the build directory's (kunitpy.build_lock()), then the tree's.  The
# first two are never waited for (a tool that finds one taken refuses, exit
# 4, before it touches the tree), and a process never waits for the tree's
# while it holds it (hold_tree() refuses an exclusive lock under a shared one
# of the same process): so the tree's is the only lock anyone waits for, and
# two tools can never wait for each other.


@dataclass
class _Held:
    file: IO[str]
    shared: bool
    depth: int = 1


# this process's tree locks, by lock file
_LOCKS: dict[Path, _Held] = {}


def lock_file(tree: Path) -> Path:
    """The tree's lock: <parent>/.<name>.kbranch-lock, symbolic links
    resolved (two paths to one tree are one lock)."""
    tree = Path(tree).absolute().resolve()
    return tree.parent / f'.{tree.name}.kbranch-lock'


def _flock_pids(inode: int) -> set[int] | None:
    """The processes that hold (not wait for) an flock on @inode, from
    /proc/locks; None if it cannot be read."""
    try:
        text = Path('/proc/locks').read_text()
    except OSError:
        return None
    pids = set()
    for line in text.splitlines():
        fields = line.split()   # "1: FLOCK ADVISORY WRITE <pid> <maj:min:inode> 0 EOF"
        if len(fields) >= 6 and fields[1] == 'FLOCK' and fields[4].isdigit() \
                and fields[5].rsplit(':', 1)[-1] == str(inode):
            pids.add(int(fields[4]))
    return pids


def _holders(f: IO[str]) -> str:
    """Who holds the lock @f is open on, as the holders wrote themselves
    into it ("kunit run (pid 123)"), those still holding it only."""
    f.seek(0)
    holding = _flock_pids(os.fstat(f.fileno()).st_ino)
    names: list[str] = []
    for line in f.read().splitlines():
        m = re.search(r'\(pid (\d+)\)', line)
        if m is None or line.strip() in names:
            continue
        pid = int(m.group(1))
        if pid == os.getpid() or (pid not in holding if holding is not None
                                  else not Path(f'/proc/{pid}').exists()):
            continue
        names.append(line.strip())
    return ', '.join(names) or 'another process'


def hold_tree(tree: Path, who: str, shared: bool = False,
              log: Log = print) -> None:
    """Takes the tree's lock, exclusive or @shared, until release_tree() or
    the end of the process; waits for it while another process holds it the
    other way, saying so once and naming the holders (Ctrl-C stops the
    wait).  Taken again by the same process, it is counted, not taken."""
    path = lock_file(tree)
    held = _LOCKS.get(path)
    if held is not None:
        if held.shared and not shared:
            raise RuntimeError(f'{who}: an exclusive lock of {tree} under a '
                               f'shared one of the same process would wait '
                               f'for itself: release the shared one first')
        held.depth += 1
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        f = open(path, 'a+')
    except OSError as err:
        raise ToolError(f'cannot open {path}, the lock of the kernel tree: '
                        f'{err}', cli.EXIT_ENV) from None
    try:
        mode = fcntl.LOCK_SH if shared else fcntl.LOCK_EX
        try:
            fcntl.flock(f, mode | fcntl.LOCK_NB)
        except BlockingIOError:
            holders = _holders(f)
            log(f'waiting for the kernel tree {tree}: ' +
                (f'{holders} is changing it' if shared else
                 f'in use by {holders}; it is changed only when no other '
                 f'tool builds from it or changes it') + ' (Ctrl-C to stop)')
            fcntl.flock(f, mode)
        if not shared:
            f.seek(0)
            f.truncate()
        f.write(f'{who} (pid {os.getpid()})\n')
        f.flush()
    except BaseException:
        f.close()
        raise
    _LOCKS[path] = _Held(f, shared)


def release_tree(tree: Path) -> None:
    """Gives back what hold_tree() took (the last of nested holds does)."""
    path = lock_file(tree)
    held = _LOCKS.get(path)
    if held is None:
        return
    held.depth -= 1
    if held.depth:
        return
    del _LOCKS[path]
    try:
        # the last holder empties the file; shared holders cannot take their
        # own line out while others hold it (_holders() skips old lines)
        fcntl.flock(held.file, fcntl.LOCK_EX | fcntl.LOCK_NB)
        held.file.seek(0)
        held.file.truncate()
    except OSError:
        pass
    finally:
        held.file.close()       # and with it the lock


@contextlib.contextmanager
def tree_lock(tree: Path, who: str, shared: bool = False,
              log: Log = print) -> Iterator[None]:
    """hold_tree() for a with block."""
    hold_tree(tree, who, shared, log)
    try:
        yield
    finally:
        release_tree(tree)


def abort_command(tree: Path) -> str:
    """The command that abandons the git operation left half done in @tree
    (kgit.operation_in_progress()), for a refusal to name."""
    gitdir = Path(git(tree, 'rev-parse', '--absolute-git-dir'))
    op = 'rebase'
    if (gitdir / 'rebase-apply' / 'applying').exists():
        op = 'am'
    elif (gitdir / 'MERGE_HEAD').exists():
        op = 'merge'
    elif (gitdir / 'CHERRY_PICK_HEAD').exists():
        op = 'cherry-pick'
    return f'git -C {shlex.quote(str(tree))} {op} --abort'


def apply_series(tree: Path, patches: list[Path], log: Log = print,
                 who: str = 'prepare') -> int:
    """git am each patch, and gives its commit the patch's reviewer notes
    (below its --- line) as a git note; holds the tree's lock exclusive.
    When a patch does not apply, and on anything else that stops it (Ctrl-C
    in the middle of a git am), aborts the am and puts the tree back where it
    was, then raises (a ToolError naming the patch).  The tree's hooks do not
    run (a developer's applypatch-msg hook must not make a patch "not
    apply"): core.hooksPath=/dev/null, as git am --no-verify does from git
    2.40 on; bookworm's git 2.39 has no such option."""
    with tree_lock(tree, who, log=log):
        orig = git(tree, 'rev-parse', 'HEAD')
        # amend and rebase carry the notes to the rewritten commits
        git(tree, 'config', 'notes.rewriteRef', kgit.NOTES_REF)
        try:
            for patch in patches:
                proc = subprocess.run(
                    ['git', '-C', str(tree), '-c', 'core.hooksPath=/dev/null',
                     'am', '-q', '--keep-cr', '--committer-date-is-author-date',
                     str(patch)],
                    env=kgit.git_env({
                        'GIT_COMMITTER_NAME': kgit.BASE_ENV['GIT_COMMITTER_NAME'],
                        'GIT_COMMITTER_EMAIL': kgit.BASE_ENV['GIT_COMMITTER_EMAIL']}),
                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
                if proc.returncode != 0:
                    # git's own reason, without its hints and its advice on
                    # continuing the am that is aborted below
                    why = [line for line in proc.stdout.splitlines()
                           if line.strip() and not line.startswith('hint:')
                           and '"git am --' not in line]
                    raise ToolError(f'{patch.name} does not apply '
                                    f'({"; ".join(why[:2]) or "git am failed"}); '
                                    f'the tree is back where it was', cli.EXIT_FAIL)
                notes = series.patch_notes(patch.read_text(errors='replace'))
                if notes:
                    git(tree, 'notes', f'--ref={kgit.NOTES}', 'add', '-f', '-F',
                        '-', 'HEAD', input=notes + '\n', env=kgit.BASE_ENV)
                log(f'applied {patch.name}')
        except BaseException as err:
            git(tree, 'am', '--abort', check=False)
            git(tree, 'reset', '-q', '--hard', orig)
            if not isinstance(err, ToolError):
                log(f'interrupted: the git am was aborted and {tree} is back '
                    f'where it was ({orig[:12]})')
            raise
        _record_applied(tree, orig)
    return len(patches)


def _fresh(tree: Path) -> bool:
    """Whether prepare() creates the tree: none, or an empty directory."""
    return not tree.exists() or (tree.is_dir() and not any(tree.iterdir()))


def _examine(base: series.Base, patches: list[Path], tree: Path,
             force: bool) -> tuple[int, int, list[str], list[str]]:
    """_pending_work() of an existing tree, after refusing (exit 4) one that
    tools/prepare did not make, one of another base, one with a git
    operation half done, and one that holds work (unless @force)."""
    if not (tree / '.git').exists() or rev(tree, kgit.TAG_BASE) is None:
        raise ToolError(f'{tree} exists but was not prepared by tools/prepare '
                        f'(no {kgit.TAG_BASE} tag): nothing was touched; '
                        f'move it away or point RECLAIM_TREE elsewhere',
                        cli.EXIT_REFUSED)
    have = _other_base(base, tree)
    if have:
        raise ToolError(f'{tree} was prepared from {have}, but '
                        f'kernel-patches/BASE names {base.package} '
                        f'{base.version}: nothing was touched; tools/prepare '
                        f'--force moves the tree aside (kept whole) and '
                        f'prepares the new base', cli.EXIT_REFUSED)
    busy = kgit.operation_in_progress(tree)
    if busy:
        raise ToolError(f'{tree} has a {busy} in progress: finish it, or '
                        f'abort it with `{abort_command(tree)}`; nothing was '
                        f'touched', cli.EXIT_REFUSED)
    with tempfile.TemporaryDirectory(prefix='kbranch-') as tmpdir:
        applied, stale, problems, keys = _pending_work(tree, patches,
                                                       tmpdir)
    if problems and not force:
        raise ToolError(
            f'{tree} holds work that is not in kernel-patches/: '
            f'{"; ".join(problems)}. Nothing was touched. Commit and '
            f'export it (tools/export), test it as it is '
            f'(tools/kunit run --as-is), or reset the tree to the series '
            f'with tools/prepare --force (which saves the work in a '
            f'stash and a backup branch first)', cli.EXIT_REFUSED)
    return applied, stale, problems, keys


def _other_base(base: series.Base, tree: Path) -> str | None:
    """The package and version a tree of another base than @base was
    prepared from, or None."""
    have = (git(tree, 'config', 'kbranch.package', check=False),
            git(tree, 'config', 'kbranch.version', check=False))
    return None if have == (base.package, base.version) else ' '.join(have)


def _current(base: series.Base, patches: list[Path], tree: Path,
             force: bool) -> bool:
    """Whether the tree is base + series with nothing for prepare to do
    (nothing to apply, replace or record); refusals as _examine()."""
    if _fresh(tree):
        return False
    if force and (tree / '.git').exists() and _other_base(base, tree):
        return False
    applied, stale, problems, keys = _examine(base, patches, tree, force)
    return not problems and not stale and applied == len(patches) \
        and set(keys) <= _recorded(tree)[0]


def _change(base: series.Base, patches: list[Path], tree: Path, force: bool,
            log: Log) -> str:
    """prepare()'s work, the tree's lock held exclusive."""
    old = force and (tree / '.git').exists() and _other_base(base, tree)
    if old:
        # a BASE bump on a machine that keeps its tree (T2): the old tree,
        # its work, stashes and branches included, moves aside whole
        aside = tree.with_name(f'{tree.name}.{old.split()[-1]}.'
                               f'{time.strftime("%Y%m%d-%H%M%S")}')
        for wt in kgit.git(tree, 'worktree', 'list', '--porcelain').splitlines():
            if wt.startswith('worktree ') and Path(wt[9:]) != tree:
                git(tree, 'worktree', 'remove', '--force', wt[9:], check=False)
        os.rename(tree, aside)
        log(f'--force: {tree} was prepared from {old}; moved it to {aside}')
    if _fresh(tree):
        create(base, tree, log)
        apply_series(tree, patches, log)
        return f'{tree}: prepared {base.describe()} + {len(patches)} patch(es)'
    applied, stale, problems, keys = _examine(base, patches, tree, force)
    if stale and not problems:
        keep = git(tree, 'rev-parse', f'HEAD~{stale}')
        log(f'replacing {stale} commit(s) of an earlier series that '
            f'tools/prepare applied and nobody changed since (were '
            f'{git(tree, "rev-parse", "HEAD")[:12]})')
        git(tree, 'reset', '-q', '--hard', keep)
    if problems:        # and --force
        _save_work(tree, log)
        applied = 0
    else:
        # the tree's commits that are series patches, whoever made them
        # (a developer's own export, say): not work when the series changes
        _record_keys(tree, keys)
    todo = patches[applied:]
    if not todo:
        return f'{tree}: up to date ({base.describe()} + {len(patches)} ' \
               f'patch(es))'
    apply_series(tree, todo, log)
    return f'{tree}: {base.describe()} + {len(patches)} patch(es) ' \
           f'({len(todo)} newly applied)'


def prepare(base: series.Base, patches: list[Path], tree: Path,
            force: bool = False, log: Log = print, who: str = 'prepare',
            keep: bool = False) -> str:
    """Brings tree to base + series.  Returns a one-line summary.

    It looks under the tree's lock held shared, and takes it exclusive only
    when there is something to do (waiting for the builds from the tree to
    end).  With @keep it returns holding the lock shared, for the rest of
    the process (a build from the tree), with the tree at base + series:
    looked at again after the change, since another tool may change it
    between the exclusive lock and the shared one."""
    tree = Path(tree)
    summary = None
    for _ in range(3):
        hold_tree(tree, who, shared=True, log=log)
        try:
            current = _current(base, patches, tree, force)
        except BaseException:
            release_tree(tree)
            raise
        if current:
            if not keep:
                release_tree(tree)
            return summary or f'{tree}: up to date ({base.describe()} + ' \
                              f'{len(patches)} patch(es))'
        release_tree(tree)
        with tree_lock(tree, who, log=log):
            summary = _change(base, patches, tree, force, log)
        if not keep:
            return summary
    raise ToolError(f'{tree} was changed by another tool each time {who} had '
                    f'prepared it: run it again when the other is done',
                    cli.EXIT_REFUSED)


def ready(as_is: bool = False, no_setup: bool = False,
          log: Log = print, who: str = 'a build') -> Path:
    """The kernel tree to build, for tools/kunit and tools/e2e: Debian
    packages installed (unless no_setup), the tree prepared to base +
    series, or taken as it is with as_is; returns holding the tree's lock
    shared for the rest of the process (prepare()'s @keep), so that no
    tools/prepare changes the tree under the build.  Take the build
    directory's lock first (the lock order above)."""
    tree = paths.tree_dir().absolute()
    if not no_setup:
        hostpkgs.install(series.Base.load(), log=log)
    if as_is:
        if not (tree / '.git').is_dir():
            raise ToolError(f'--as-is: {tree} does not exist; run without '
                            f'--as-is to prepare it', cli.EXIT_ENV)
        hold_tree(tree, who, shared=True, log=log)
        log(f'--as-is: testing {tree} as it is, not kernel-patches/')
        return tree
    log(prepare(series.Base.load(), series.read_series(), tree, log=log,
                who=who, keep=True))
    return tree
