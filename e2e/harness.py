# SPDX-License-Identifier: GPL-2.0
"""The end-to-end harness: the guest's initramfs, its boots, their results.

tools/e2e imports it from here, next to the guest's /init (e2e/init).
The guest boots the default KUnit kernel (.kunitconfig) with its suites
turned off (kunit.enable=0).

The initramfs holds busybox and nfs-utils from Debian's packages, fetched
with `apt-get download` and unpacked with `dpkg-deb -x` into the cache:
never installed on this machine (nfs-kernel-server would start the host's
own nfsd).  The libraries the binaries need come from those packages, or
from this machine's /lib when Debian's base system already has them.
"""

import enum
import gzip
import hashlib
import json
import math
import os
import re
import shutil
import statistics
import subprocess
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Callable, Sequence, TypedDict

import cli
import kgit
import kunitpy
import paths
from cli import ToolError

NAME = 'e2e'

# The guest's Debian packages (bookworm names): unpacked into the
# initramfs, never installed on this machine (the host's packages are the
# ones tools/setup installs).  The libraries are those the binaries below
# need beyond the base system.
GUEST_PACKAGES = ['busybox-static', 'nfs-kernel-server', 'nfs-common',
                  'libtirpc3', 'libtirpc-common', 'libwrap0', 'libnfsidmap1',
                  'libgssapi-krb5-2', 'libkrb5-3', 'libk5crypto3',
                  'libkrb5support0', 'libcom-err2', 'libkeyutils1',
                  'dmsetup', 'libdevmapper1.02.1']
BINARIES = ['usr/sbin/rpc.nfsd', 'usr/sbin/rpc.mountd', 'usr/sbin/exportfs',
            'sbin/mount.nfs', 'sbin/dmsetup']
LIB_DIRS = ['lib/x86_64-linux-gnu', 'usr/lib/x86_64-linux-gnu']
LOADER = 'lib64/ld-linux-x86-64.so.2'
HOST_FILES = ['etc/services', 'etc/protocols']     # netbase
# The fs scenario's initramfs (the load scenario boots it too) has these
# too: stress-ng (its filesystem class is the workload), the mkfs of ext4,
# XFS and btrfs and iproute2's ip, with the libraries they need (bookworm
# names).
FS_PACKAGES = ['stress-ng', 'e2fsprogs', 'xfsprogs', 'btrfs-progs',
               'libext2fs2', 'libblkid1', 'libuuid1', 'libinih1',
               'liburcu8', 'libudev1', 'libapparmor1', 'libbsd0', 'libmd0',
               'libegl1', 'libglvnd0', 'libgles2', 'libgbm1', 'libdrm2',
               'libwayland-server0', 'libexpat1', 'libffi8', 'libipsec-mb1',
               'libjpeg62-turbo', 'libjudydebian1', 'libkmod2', 'libsctp1',
               'libxxhash0', 'libcrypt1', 'liblzma5', 'libzstd1', 'libssl3',
               'zlib1g',
               # the load scenario's server in a network namespace of its
               # own: iproute2's ip makes the veth pair
               'iproute2', 'libbpf1', 'libcap2', 'libdb5.3', 'libelf1',
               'libmnl0', 'libselinux1', 'libpcre2-8-0', 'libxtables12',
               # the pnfs scenario: nfsd serves NFSv3 (the data server),
               # which it registers with rpcbind
               'rpcbind', 'libsystemd0', 'libgcrypt20', 'libgpg-error0',
               'liblz4-1']
FS_BINARIES = ['usr/bin/stress-ng', 'sbin/mke2fs', 'sbin/mkfs.xfs',
               'sbin/mkfs.btrfs', 'bin/ip', 'sbin/rpcbind']

# The three policies, as the nfs module parameters each boot gets.  The
# unbounded wait exists only with CONFIG_NFS_DEBUG_RELEASE_WAIT_UNBOUNDED,
# which .kunitconfig sets.
POLICIES: dict[str, dict[str, int]] = {
    'none': {'nfs.release_wait_local_ms': 0},
    'bounded': {'nfs.release_wait_local_ms': 100},
    'unbounded': {'nfs.release_wait_unbounded': 1},
}


def policy_params(policy: str) -> list[str]:
    """The kernel command line words of @policy."""
    return [f'{k}={v}' for k, v in POLICIES[policy].items()]


def policy_bound(policy: str) -> int | None:
    """The local budget of @policy in ms; None for no bound."""
    if POLICIES[policy].get('nfs.release_wait_unbounded'):
        return None
    return POLICIES[policy].get('nfs.release_wait_local_ms')


# A bounded wait may overrun its bound by scheduling delays; under TCG on a
# loaded 2-core host those reach hundreds of milliseconds (the KUnit suite
# measured 51-58 ms for a 50 ms bound, idle).  One second cannot flake and
# still catches a wait that ignores its bound.
MARGIN_MS = 1000

MEMORY_MB = 384

# The scenarios of e2e/init: pressure (writers under memory pressure),
# stall (a COMMIT held by a suspended device, then memory.reclaim),
# cycle (writers in the root cgroup, one nfsd thread: nfsd reclaims) and
# fs (lockdep under stress-ng on a real filesystem, e2e/fs.py) and load
# (the policies compared on an ext4 export under memory cgroup or global
# pressure, e2e/load.py).
SCENARIOS = ('pressure', 'stall', 'cycle', 'fs', 'load', 'pnfs')

# The guest's kernels: the branch (the default KUnit build), and the
# branch with cce0be6eb497's change to nfs_release_folio() ("NFS: Fix a
# deadlock involving nfs_release_folio()") taken back: it calls
# nfs_wb_folio(), which writes the folio back and waits for its COMMIT,
# in any task but kswapd and kcompactd, nfsd's threads among them, as
# 6.12 did before cce0be6eb497.  The rest is the branch's (its lockdep
# model of the waits on nfsd among it), so it is not 6.12 before
# cce0be6eb497 as a whole.  e2e/<kernel>.diff makes it of the prepared
# tree, in a worktree of its own (revert_tree()).
KERNELS = ('branch', 'pre-cce0be6eb497', 'no-reclaim-fs', 'no-memcg-map',
           'no-rr-walk', 'no-pnfs-nofs', 'base', 'base-pnfs-fix',
           'base-mglru-fix', 'rt', 'rt-no-rr-walk')
# The base kernel: the prepared tree's base commit (kernel-patches/BASE,
# Debian's linux-source-6.12 as it ships, none of the series), configured
# as the branch's guest kernel is, but for the options the base does not
# have (base_kunitconfig()).  Only the load scenario boots it, with the
# policy none: it has no release wait and no nfs_release_folio_wait event.
BASE_KERNEL = 'base'
# The base kernel with a fix posted on its own (patch N of
# kernel-patches/postings/<posting>/, applied to the base's worktree and
# built in the base's build directory, so that only what the fix touches
# is compiled): a fix measured without the rest of the series.
FIX_POSTING = {'base-pnfs-fix': ('pnfs-commit-nofs', 1),
               'base-mglru-fix': ('mglru-nr-isolated', 2)}
BASE_KERNELS = (BASE_KERNEL, *FIX_POSTING)
# The options of e2e/guest.config the series adds: a base kernel lacks
# them (install_kernel() checks the rest).
SERIES_OPTIONS = ('CONFIG_NFS_DEBUG_RELEASE_WAIT_UNBOUNDED',
                  'CONFIG_LOCKDEP_RECLAIM_FS',
                  'CONFIG_LOCKDEP_ISOLATION_THROTTLE',
                  'CONFIG_TEST_RECLAIM_INVERSION')
# The fs scenario's anchors, for comparing lockdep's reports: no-reclaim-fs
# is the branch built with kunit/variants/no-reclaim-fs.config (lockdep's
# RECLAIM_FS state, the RFC, off: the fs_reclaim map, which the series
# also takes in memory cgroup reclaim); no-memcg-map is that too, with
# e2e/no-memcg-map.diff, which takes those two lines back out of
# try_to_free_mem_cgroup_pages() (6.12's fs_reclaim map).  no-rr-walk is
# the branch without
# "lockdep: look past held recursive readers in check_prevs_add()"
# (e2e/no-rr-walk.diff reverts it, its selftests too): what that change
# costs in dependencies and whether it adds reports.  rt and rt-no-rr-walk
# are the branch and no-rr-walk built with kunit/variants/rt.config
# (PREEMPT_RT, where local_bh_disable() takes a recursive reader).
KERNEL_VARIANT = {'no-reclaim-fs': 'no-reclaim-fs',
                  'no-memcg-map': 'no-reclaim-fs',
                  'rt': 'rt', 'rt-no-rr-walk': 'rt'}
# the kernels made by a diff (e2e/<kernel>.diff, or the diff KERNEL_DIFF
# names) on the prepared tree
DIFF_KERNELS = ('pre-cce0be6eb497', 'no-memcg-map', 'no-rr-walk', 'no-pnfs-nofs',
                'rt-no-rr-walk')
KERNEL_DIFF = {'rt-no-rr-walk': 'no-rr-walk'}

# The stall scenario: how long its reclaim may take and still count as
# having returned at once (no wait) or after its budgets, beyond the waits
# themselves: memory.reclaim's 17 attempts at scanning a few thousand
# folios, under TCG on a loaded 2-core host.  Measured: see README.
STALL_RECLAIM_SLACK_S = 20
# memory.reclaim gives up after MAX_RECLAIM_RETRIES (16) + 1 calls of
# try_to_free_mem_cgroup_pages() that reclaim nothing: one budget each.
STALL_RECLAIM_CALLS = 17
# How long a SIGKILLed reclaimer may take to leave the unbounded wait.
STALL_KILL_S = 10


def e2e_dir() -> Path:
    return paths.cache_dir() / 'e2e'


def initramfs_path(flavor: str = 'nfs') -> Path:
    """The initramfs of the NFS scenarios, or the fs scenario's (its own:
    stress-ng and the mkfs tools stay out of the NFS guests' memory)."""
    return e2e_dir() / ('initramfs.cpio.gz' if flavor == 'nfs'
                        else f'initramfs-{flavor}.cpio.gz')


def build_dir(kernel: str = 'branch') -> Path:
    """Where the guest's kernel is built: a build directory of its own,
    $RECLAIM_BUILD_DIR/e2e for the branch, e2e-<kernel> for the others
    (the suites' configuration, .kunitconfig, builds in default/)."""
    if kernel in BASE_KERNELS:
        return paths.build_dir(f'e2e-{BASE_KERNEL}')
    return paths.build_dir('e2e' if kernel == 'branch' else f'e2e-{kernel}')


def seed_dir(kernel: str = 'branch') -> Path | None:
    """The suites' build directory that @kernel's build may start from (a
    copy, so that kbuild compiles only what the guest's options change),
    or None: a kernel of another source tree (a diff's worktree, the base)
    shares no object with it."""
    if kernel in DIFF_KERNELS or kernel in BASE_KERNELS:
        return None
    return paths.build_dir(KERNEL_VARIANT.get(kernel, 'default'))


def base_tree(tree: Path) -> Path:
    """A worktree of the prepared tree at its base commit, in
    $RECLAIM_CACHE/e2e/base-tree (the series' commits are not in it)."""
    return kgit.worktree(tree, e2e_dir() / f'{BASE_KERNEL}-tree',
                         kgit.base_commit(tree))


def base_kunitconfig(branch_config: str, symbols: set[str]) -> str:
    """The base kernel's kunitconfig: every line of the branch's built
    .config (@branch_config) that sets a symbol of @symbols (the base's
    Kconfig symbols) or says it is not set; the branch's own symbols (its
    suites, its Kconfig options) are dropped, so the base is configured as
    the branch is where the two have the same options."""
    out = ['# The base kernel (tools/e2e build --kernel base): the branch\'s',
           '# guest .config, restricted to the base\'s Kconfig symbols.']
    for line in branch_config.splitlines():
        m = re.match(r'^(?:# )?CONFIG_(\w+)(?:=| is not set$)', line)
        if m and m[1] in symbols:
            out.append(line)
    return '\n'.join(out) + '\n'


def fix_patch(kernel: str) -> Path:
    """The fix a kernel of FIX_POSTING adds to the base: its posting's
    patch N (ToolError, exit 3, if tools/export has not written it)."""
    name, number = FIX_POSTING[kernel]
    posting = paths.REPO / 'kernel-patches' / 'postings' / name
    patches = sorted(posting.glob(f'{number:04d}-*.patch'))
    if not patches:
        raise ToolError(f'no {number:04d}-*.patch in {posting}: run tools/export',
                        cli.EXIT_ENV)
    return patches[0]


def kernel_diff(kernel: str) -> Path:
    """The change that makes @kernel (not 'branch') of the prepared tree."""
    return paths.REPO / 'e2e' / f'{KERNEL_DIFF.get(kernel, kernel)}.diff'


def kernel_revision(tree: Path, kernel: str) -> str:
    """What @kernel (not 'branch') is made of: the prepared tree's HEAD and
    the SHA-256 of its diff, as install_kernel() records it."""
    head = kgit.git(tree, 'rev-parse', 'HEAD').strip()
    digest = hashlib.sha256(kernel_diff(kernel).read_bytes()).hexdigest()
    return f'{head} {digest[:16]}'


def stale_revision(tree: Path, kernel: str) -> str | None:
    """Why the copy of @kernel (not 'branch') is not made of the prepared
    tree's HEAD and e2e/<kernel>.diff as they are now, or None."""
    try:
        recorded = (kernel_dir(kernel) / 'revision').read_text().strip()
        now = kernel_revision(tree, kernel)
    except (OSError, ToolError):
        return None
    if recorded != now:
        return (f'{kernel_path(kernel)} was built from {recorded}, the tree and '
                f'{kernel_diff(kernel).name} are now {now}: run tools/e2e build '
                f'--kernel {kernel}')
    return None


def revert_tree(tree: Path, kernel: str) -> Path:
    """A worktree of the prepared tree at its HEAD with kernel_diff(@kernel)
    applied, in $RECLAIM_CACHE/e2e/<kernel>-tree (ToolError if the change
    does not apply: the series moved under it)."""
    head = kgit.git(tree, 'rev-parse', 'HEAD').strip()
    work = kgit.worktree(tree, e2e_dir() / f'{kernel}-tree', head)
    diff = kernel_diff(kernel)
    proc = subprocess.run(['git', 'apply', str(diff)], cwd=work, text=True,
                          env=kgit.git_env(), capture_output=True)
    if proc.returncode != 0:
        raise ToolError(f'{diff} does not apply to the prepared tree '
                        f'({head[:12]}): {proc.stderr.strip()}', cli.EXIT_ENV)
    return work


def kernel_dir(kernel: str = 'branch') -> Path:
    """The guest's kernel as tools/e2e build left it: a copy of the build's
    bzImage and .config, which later builds of the directory do not touch."""
    return e2e_dir() / ('kernel' if kernel == 'branch' else f'kernel-{kernel}')


def kernel_path(kernel: str = 'branch') -> Path:
    return kernel_dir(kernel) / 'bzImage'


GUEST_CONFIG = paths.REPO / 'e2e' / 'guest.config'


def guest_options() -> list[str]:
    """The CONFIG_X=y lines of e2e/guest.config (ToolError, exit 3, if it
    cannot be read)."""
    try:
        text = GUEST_CONFIG.read_text()
    except OSError as err:
        raise ToolError(f'cannot read {GUEST_CONFIG}: {err.strerror}',
                        cli.EXIT_ENV) from None
    return [line.strip() for line in text.splitlines()
            if line.strip().startswith('CONFIG_')]


def lock_guest(who: str) -> None:
    """Holds $RECLAIM_CACHE/e2e/ for the rest of this process: one
    tools/e2e at a time builds, makes the initramfs or boots (exit 4 for
    the next, naming the holder)."""
    kunitpy.hold_build(e2e_dir(), who, 'point RECLAIM_CACHE elsewhere')


def stale_kernel(kernel: str = 'branch') -> str | None:
    """Why the guest's copy of the kernel is not the build directory's
    latest bzImage, or None: the copy's stamp records the size and mtime of
    the bzImage it was made from."""
    image = build_dir(kernel) / 'arch/x86/boot/bzImage'
    try:
        stamp = (kernel_dir(kernel) / 'source').read_text().strip()
        st = image.stat()
    except OSError:
        return None
    if stamp != f'{st.st_size} {st.st_mtime_ns}':
        return (f'{image} changed since tools/e2e build copied it: the guest '
                f'boots the older copy; run tools/e2e build to boot the new one')
    return None


def missing_options(config: str, kernel: str = 'branch') -> list[str]:
    """The guest's options that the text of a built .config lacks (but
    those @kernel's variant turns off)."""
    have = set(line.strip() for line in config.splitlines())
    off: set[str] = set(SERIES_OPTIONS) if kernel in BASE_KERNELS else set()
    if kernel in KERNEL_VARIANT:
        variant = kunitpy.variant_files()[KERNEL_VARIANT[kernel]].read_text()
        off = set(re.findall(r'^# (CONFIG_\w+) is not set', variant, re.M))
    return [o for o in guest_options()
            if o not in have and o.split('=', 1)[0] not in off]


def install_kernel(build: Path, kernel: str = 'branch',
                   revision: str | None = None) -> Path:
    """Copies @build's bzImage and .config to kernel_dir(@kernel), after checking
    that the .config has every option of e2e/guest.config (else ToolError,
    exit 3); returns the copied bzImage."""
    config = build / '.config'
    image = build / 'arch/x86/boot/bzImage'
    try:
        text = config.read_text()
    except OSError as err:
        raise ToolError(f'cannot read {config}: {err.strerror}', cli.EXIT_ENV) from None
    missing = missing_options(text, kernel)
    if missing:
        raise ToolError(f'{config} lacks what the guest needs '
                        f'(e2e/guest.config): {", ".join(missing)}', cli.EXIT_ENV)
    if not image.is_file():
        raise ToolError(f'no kernel at {image}', cli.EXIT_ENV)
    out = kernel_dir(kernel)
    out.mkdir(parents=True, exist_ok=True)
    st = image.stat()
    copies = [(image, 'bzImage'), (config, 'config')]
    try:
        (out / 'revision').unlink(missing_ok=True)
        for src, name in copies:
            shutil.copyfile(src, out / f'.{name}.tmp')
        (out / '.source.tmp').write_text(f'{st.st_size} {st.st_mtime_ns}\n')
        # the stamp last: a copy interrupted before it is stale to run
        for name in ('bzImage', 'config', 'source'):
            os.replace(out / f'.{name}.tmp', out / name)
        if revision:
            (out / 'revision').write_text(revision + '\n')
    except OSError as err:
        for name in ('bzImage', 'config', 'source'):
            (out / f'.{name}.tmp').unlink(missing_ok=True)
        raise ToolError(f'cannot copy the kernel to {out}: {err}',
                        cli.EXIT_ENV) from None
    return out / 'bzImage'


# --- the initramfs ---------------------------------------------------------

def download(packages: list[str], debs: Path, log: Callable[[str], object]) -> None:
    """apt-get download of every package not already in debs/."""
    debs.mkdir(parents=True, exist_ok=True)
    have = {p.name.split('_', 1)[0] for p in debs.glob('*.deb')}
    want = [p for p in packages if p not in have]
    if not want:
        return
    if not shutil.which('apt-get'):
        raise ToolError('apt-get not found: the initramfs is made from '
                        'Debian packages', cli.EXIT_ENV)
    log(f'$ apt-get download {" ".join(want)}')
    proc = subprocess.run(['apt-get', 'download', *want], cwd=debs, text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    have = {p.name.split('_', 1)[0] for p in debs.glob('*.deb')}
    lost = [p for p in want if p not in have]
    if proc.returncode != 0 or lost:
        last = (proc.stdout.strip().splitlines() or ['(no output)'])[-1]
        raise ToolError(f'apt-get download failed for {" ".join(lost or want)}: '
                        f'{last} (is apt reachable? try apt-get update)',
                        cli.EXIT_ENV)


def unpack(debs: Path, root: Path, packages: list[str] | None = None) -> None:
    """dpkg-deb -x of debs/' packages (those of @packages only, if given)
    into a new @root."""
    if root.exists():
        shutil.rmtree(root)
    root.mkdir(parents=True)
    for deb in sorted(debs.glob('*.deb')):
        if packages is not None and deb.name.split('_', 1)[0] not in packages:
            continue
        proc = subprocess.run(['dpkg-deb', '-x', str(deb), str(root)],
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                              text=True)
        if proc.returncode != 0:
            raise ToolError(f'dpkg-deb -x {deb.name} failed: '
                            f'{proc.stdout.strip()}', cli.EXIT_ENV)


def needed(path: Path) -> list[str]:
    """The DT_NEEDED sonames of an ELF file (empty for a static one)."""
    proc = subprocess.run(['objdump', '-p', str(path)], text=True,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if proc.returncode != 0:
        raise ToolError(f'objdump -p {path} failed: {proc.stderr.strip()}',
                        cli.EXIT_ENV)
    return re.findall(r'^\s*NEEDED\s+(\S+)', proc.stdout, re.M)


def find_library(soname: str, roots: list[Path]) -> Path | None:
    for root in roots:
        for d in LIB_DIRS:
            p = Path(root) / d / soname
            if p.exists():
                return p
    return None


def resolve_libraries(binaries: list[Path], roots: list[Path]) -> dict[str, Path]:
    """Every library the binaries need, transitively: {soname: path}."""
    found: dict[str, Path] = {}
    todo: list[str] = []
    for b in binaries:
        todo += needed(b)
    while todo:
        soname = todo.pop()
        if soname in found:
            continue
        path = find_library(soname, roots)
        if path is None:
            raise ToolError(f'library {soname} not found in the unpacked '
                            f'packages or on this machine: add its package '
                            f'to GUEST_PACKAGES in e2e/harness.py', cli.EXIT_ENV)
        found[soname] = path
        todo += needed(path.resolve())
    return found


def write_cpio(root: Path, out: Path) -> None:
    """A gzipped newc cpio of root, owned by root:root."""
    entries = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(dirnames) + sorted(filenames):
            entries.append(Path(dirpath) / name)
    ino = 1

    def header(name: bytes, mode: int, size: int, nlink: int = 1) -> bytes:
        nonlocal ino
        fields = [ino, mode, 0, 0, nlink, 0, size, 0, 0, 0, 0, len(name) + 1, 0]
        ino += 1
        return b'070701' + b''.join(b'%08X' % f for f in fields)

    def pad(n: int) -> bytes:
        return b'\0' * ((4 - n % 4) % 4)

    tmp = out.with_suffix('.tmp')
    with gzip.open(tmp, 'wb', compresslevel=6) as f:
        for path in entries:
            arcname = str(path.relative_to(root)).encode()
            st = path.lstat()
            if path.is_symlink():
                data = os.readlink(path).encode()
            elif path.is_file():
                data = path.read_bytes()
            else:
                data = b''
            h = header(arcname, st.st_mode, len(data),
                       2 if path.is_dir() and not path.is_symlink() else 1)
            f.write(h + arcname + b'\0')
            f.write(pad(len(h) + len(arcname) + 1))
            f.write(data + pad(len(data)))
        trailer = b'TRAILER!!!'
        h = header(trailer, 0, 0)
        f.write(h + trailer + b'\0' + pad(len(h) + len(trailer) + 1))
    tmp.replace(out)


def make_initramfs(init_script: Path, log: Callable[[str], object],
                   host_root: Path | str = '/', flavor: str = 'nfs') -> Path:
    """Builds the initramfs (@flavor 'fs': with FS_PACKAGES' FS_BINARIES
    too, and its own path); returns its path."""
    if not Path(init_script).is_file():
        raise ToolError(f'{init_script} not found', cli.EXIT_USAGE)
    for tool in ('dpkg-deb', 'objdump'):
        if not shutil.which(tool):
            raise ToolError(f'{tool} not found (Debian packages dpkg, '
                            f'binutils)', cli.EXIT_ENV)
    fs = flavor == 'fs'
    packages = GUEST_PACKAGES + (FS_PACKAGES if fs else [])
    base = e2e_dir()
    debs = base / 'debs'
    pkgroot, root = base / f'pkgroot-{flavor}', base / f'initramfs-{flavor}'
    download(packages, debs, log)
    unpack(debs, pkgroot, packages)
    if root.exists():
        shutil.rmtree(root)
    for d in ['bin', 'sbin', 'usr/bin', 'usr/sbin', 'etc', 'proc', 'sys', 'dev', 'run',
              'tmp', 'mnt', 'lib64', 'var/lib/nfs', *LIB_DIRS]:
        (root / d).mkdir(parents=True, exist_ok=True)

    busybox = pkgroot / 'bin/busybox'
    if not busybox.is_file():
        raise ToolError('busybox-static did not unpack bin/busybox',
                        cli.EXIT_ENV)
    shutil.copy2(busybox, root / 'bin/busybox')
    binaries = []
    for b in BINARIES + (FS_BINARIES if fs else []):
        src = pkgroot / b
        if not src.is_file():
            raise ToolError(f'{b} not in the unpacked packages '
                            f'({", ".join(packages)})',
                            cli.EXIT_ENV)
        shutil.copy2(src, root / b)
        binaries.append(src)
    libs = resolve_libraries(binaries, [pkgroot, Path(host_root)])
    for soname, path in sorted(libs.items()):
        shutil.copy2(path.resolve(), root / LIB_DIRS[0] / soname)
    loader = Path(host_root) / LOADER
    if not loader.exists():
        raise ToolError(f'{loader} not found', cli.EXIT_ENV)
    shutil.copy2(loader.resolve(), root / LOADER)

    for f in HOST_FILES:
        src = Path(host_root) / f
        if not src.is_file():
            raise ToolError(f'/{f} not found (Debian package netbase): '
                            f'rpc.nfsd needs it', cli.EXIT_ENV)
        shutil.copy2(src, root / f)
    netconfig = pkgroot / 'etc/netconfig'
    if not netconfig.is_file():
        raise ToolError('libtirpc-common did not unpack etc/netconfig',
                        cli.EXIT_ENV)
    shutil.copy2(netconfig, root / 'etc/netconfig')
    (root / 'etc/passwd').write_text('root:x:0:0:root:/:/bin/sh\n'
                                     '_rpc:x:100:65534::/run/rpcbind:/bin/false\n'
                                     'nobody:x:65534:65534:nobody:/:/bin/false\n')
    (root / 'etc/group').write_text('root:x:0:\nnogroup:x:65534:\n')
    shutil.copy2(init_script, root / 'init')
    os.chmod(root / 'init', 0o755)

    if fs:
        # mke2fs's defaults for ext4 (its built-in ones predate ext4)
        shutil.copy2(pkgroot / 'etc/mke2fs.conf', root / 'etc/mke2fs.conf')
    out = initramfs_path(flavor)
    write_cpio(root, out)
    names = [Path(b).name for b in BINARIES + (FS_BINARIES if fs else [])]
    log(f'initramfs: {out} ({out.stat().st_size // 1024} KiB; busybox, '
        f'{", ".join(names)}, {len(libs)} libraries)')
    return out


# --- one boot ----------------------------------------------------------------

def qemu_command(kernel: Path | str, initramfs: Path | str, policy: str,
                 params: dict[str, Any], disk: Path | str | None = None,
                 memory_mb: int = MEMORY_MB) -> list[str]:
    """QEMU's command line for one boot; @disk, a raw image, is the guest's
    virtio-blk /dev/vda."""
    append = ['console=ttyS0', 'panic=-1', 'oops=panic',
              # the KUnit kernel, its suites not run; the hung-task
              # detector at 20 s (the suites keep the default 120 s)
              'kunit.enable=0',
              # the fs scenario's sync() and chattr wait on writeback
              # throttled by its cgroup's limit for more than 20 s under
              # TCG without being stuck (measured: 7 reports in one boot,
              # which completed): 120 s there, and in the load
              # scenario, whose writers' close() waits on the same
              f'sysctl.kernel.hung_task_timeout_secs='
              f'{120 if params.get("scenario") in ("fs", "load") else 20}',
              # nfsd serves the mount's I/O and COMMITs, not LOCALIO
              # (which the suites' kernel builds in: nfslocaliod would
              # commit, and nfsd's lockdep model would see nothing),
              # unless the boot is LOCALIO's (the stall, --localio)
              f'nfs.localio_enabled={1 if params.get("localio") else 0}',
              # e2e/init writes its results to /dev/kmsg, unthrottled
              'printk.devkmsg=on',
              *policy_params(policy),
              *(f'e2e_{k}={v}' for k, v in params.items())]
    if params.get('scenario') == 'stall':
        # /dev/ram0 (KiB): the file and ext2's own blocks
        append.append(f'ramdisk_size={(params["mb"] + 16) * 1024}')
    drive = (['-drive', f'file={disk},if=virtio,format=raw,cache=writeback']
             if disk else [])
    return ['qemu-system-x86_64', '-nodefaults', '-m', str(memory_mb),
            '-smp', '2', '-kernel', str(kernel), '-initrd', str(initramfs),
            '-append', ' '.join(append), '-no-reboot', '-nographic',
            '-serial', 'stdio', *drive]


# The headers of lockdep's reports (kernel/locking/lockdep.c), RECLAIM_FS's
# among them.
LOCKDEP_RE = re.compile(r'WARNING: (possible circular locking dependency detected|'
                        r'inconsistent lock state|possible recursive locking detected|'
                        r'possible (?:irq|memory reclaim) lock inversion dependency detected|'
                        r'.*lock order detected|bad unlock balance detected!|'
                        r'held lock freed!|lock held when returning to user space!|'
                        r'reclaim section still open .*!)')


# A lock class as a report names it: "(&ei->i_data_sem){++++}-{3:3}"
LOCK_CLASS_RE = re.compile(r'\((\S+?)\)\{[-+.?]')


class Outcome(enum.Enum):
    """How one boot ended, for run, report and the tables alike."""
    COMPLETED = 'completed'     # the guest reported its run complete
    # a kernel panic (OOM's "System is deadlocked on memory" among them)
    # before completing
    PANIC = 'panic'
    HUNG = 'hung'               # the guest said so, or QEMU was stopped
    OOM = 'oom'                 # the OOM killer ran and the run did not complete
    NO_RESULT = 'no result'     # the guest ended without a result


# --- what a console says -------------------------------------------------------

@dataclass
class Wait:
    """An nfs:nfs_release_folio_wait event: "E2E: wait BUDGET_MS WAITED_US
    RESULT [TASK]" (BUDGET_MS -1: no bound)."""
    budget_ms: int
    waited_us: int
    result: str     # committed, no_commit, timed_out, killed, budget_spent
    task: str


@dataclass
class LockdepReport:
    """A lockdep report: its header, and whether nfsd_commit or the
    isolation throttle's map is named in the 40 lines from it."""
    kind: str
    nfsd_commit: bool
    isolation_throttle: bool
    # the lock classes the report names, "(NAME){USAGE}", in order
    classes: list[str] = field(default_factory=list)
    reclaim_fs: bool = False    # it names the RECLAIM_FS state


@dataclass
class HungTask:
    """A hung-task report: the task, and whether its stack is in
    nfs_release_folio() and in LOCALIO's I/O (an nfs_local_* function)."""
    task: str
    release_wait: bool
    localio: bool = False


@dataclass
class BlockedTask:
    """A task of sysrq-w's blocked-task dump."""
    task: str
    state: str
    pid: str
    release_wait: bool      # its stack is in nfs_release_folio()


@dataclass
class NfsdThread:
    """An nfsd thread as the guest saw it after a hang: "E2E: nfsd_thread
    PID STATE FRAME..." (its /proc/PID/stat state and /proc/PID/stack)."""
    pid: str
    state: str
    stack: list[str]

    @property
    def release_wait(self) -> bool:
        """Asleep in reclaim's release of an NFS folio."""
        return 'nfs_release_folio' in self.stack


@dataclass
class Console:
    """What one boot's console says (parse_console()): the guest's E2E
    lines and the kernel's reports."""
    result: str = 'no-result'       # E2E: result (completed, hung)
    waits: list[Wait] = field(default_factory=list)
    vmstat_before: dict[str, int] = field(default_factory=dict)
    vmstat_after: dict[str, int] = field(default_factory=dict)
    memcg: dict[str, int] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # E2E lines parse_console() could not read (skipped, each also in errors)
    malformed: list[str] = field(default_factory=list)
    lockdep: list[LockdepReport] = field(default_factory=list)
    hung_task_reports: int = 0
    hung_tasks: list[HungTask] = field(default_factory=list)
    oom: int = 0                    # "Out of memory" lines
    panic: bool = False
    data: str | None = None         # E2E: data (ok, mismatch...)
    write_seconds: float | None = None
    ended: bool = False             # E2E: end
    isolated: dict[str, int] = field(default_factory=dict)
    throttled_isolated: int | None = None
    lockdep_stats: dict[str, int] = field(default_factory=dict)
    budget_spent: int | None = None     # None: a console before the count
    trace_overrun: int | None = None
    # the kernel reports no case announced (kunitpy.console_reports())
    reports: list[str] = field(default_factory=list)
    # sysrq-w's dump; None if the console has none
    blocked_tasks: list[BlockedTask] | None = None
    # nfsd's threads, printed when the writers hung
    nfsd_threads: list[NfsdThread] = field(default_factory=list)
    # the stall scenario's "E2E: stall_state" and "E2E:
    # commits_before_reclaim" lines: their KEY=N words (None: no line)
    stall_state: dict[str, int] | None = None
    commits_before_reclaim: dict[str, int] | None = None
    # every other "E2E: KEY TEXT" line: KEY -> TEXT (params, reclaim,
    # reclaim_seconds, kill...)
    values: dict[str, str] = field(default_factory=dict)
    # set by boot() and read_runs(); None when only the console was read
    policy: str | None = None
    qemu_timed_out: bool | None = None


def shown(items: Sequence[Any] | None) -> list[dict[str, Any]] | None:
    """Records as a check's detail shows them (in summary.json too)."""
    return None if items is None else [asdict(i) for i in items]


def outcome(r: Console) -> Outcome:
    """The Outcome of a parsed console @r."""
    if r.result == 'completed':
        return Outcome.COMPLETED
    if r.panic:
        return Outcome.PANIC
    if r.result == 'hung' or r.qemu_timed_out or not r.ended:
        return Outcome.HUNG
    if r.oom:
        return Outcome.OOM
    return Outcome.NO_RESULT


HUNG_TASK_RE = re.compile(r'task (\S+):\d+ blocked for more than')
BLOCKED_TASK_RE = re.compile(r'task:(\S+)\s+state:(\S+).*\bpid:\s*(\d+)')


def parse_console(text: str) -> Console:
    """What one boot's console says: the E2E lines and the kernel's reports."""
    r = Console(reports=kunitpy.console_reports(text))
    lines = text.splitlines()
    in_dump: list[BlockedTask] | None = None
    for i, line in enumerate(lines):
        line = line.rstrip('\r')
        # sysrq-w's blocked-task dump: its tasks, up to the next E2E line
        if 'sysrq: Show Blocked State' in line:
            if r.blocked_tasks is None:
                r.blocked_tasks = []
            in_dump = r.blocked_tasks
            continue
        if in_dump is not None and not line.startswith('E2E: ') \
                and 'blocked for more than' not in line and not LOCKDEP_RE.search(line):
            m = BLOCKED_TASK_RE.search(line)
            if m:
                in_dump.append(BlockedTask(m.group(1), m.group(2), m.group(3),
                                           False))
            elif in_dump and 'nfs_release_folio' in line:
                in_dump[-1].release_wait = True
            continue
        in_dump = None
        if line.startswith('E2E: '):
            key, _, rest = line[5:].partition(' ')
            try:
                if key == 'wait':
                    f = rest.split()     # fewer than 3 words: malformed
                    r.waits.append(Wait(int(f[0]), int(f[1]), f[2],
                                        f[3] if len(f) > 3 else ''))
                elif key == 'isolated':
                    f = rest.split()
                    if len(f) == 3 and f[2].isdigit():
                        r.isolated[f'{f[0]} {f[1]}'] = int(f[2])
                elif key == 'throttled_isolated':
                    if rest.strip().isdigit():
                        r.throttled_isolated = int(rest)
                elif key == 'lockdep_stats':
                    f = rest.split()
                    if len(f) == 2 and f[1].isdigit():
                        r.lockdep_stats[f[0]] = int(f[1])
                elif key in ('vmstat_before', 'vmstat_after', 'memcg'):
                    f = rest.split()
                    if len(f) == 2 and f[1].isdigit():
                        counters = (r.vmstat_before if key == 'vmstat_before' else
                                    r.vmstat_after if key == 'vmstat_after' else
                                    r.memcg)
                        counters[f[0]] = int(f[1])
                elif key == 'nfsd_thread':
                    f = rest.split()     # fewer than 2 words: malformed
                    r.nfsd_threads.append(NfsdThread(f[0], f[1], f[2:]))
                elif key == 'stall_state':
                    r.stall_state = _int_fields(rest)
                elif key == 'commits_before_reclaim':
                    r.commits_before_reclaim = _int_fields(rest)
                elif key == 'budget_spent':
                    if rest.strip().isdigit():
                        r.budget_spent = int(rest)
                elif key == 'trace_overrun':
                    if rest.strip().isdigit():
                        r.trace_overrun = int(rest)
                elif key == 'result':
                    r.result = rest.strip()
                elif key == 'write_seconds':
                    r.write_seconds = float(rest)
                elif key == 'data':
                    r.data = rest.split()[0]
                elif key == 'error':
                    r.errors.append(rest)
                elif key == 'end':
                    r.ended = True
                else:
                    r.values[key] = rest.strip()
            except (ValueError, IndexError):
                # a line cut or garbled on the serial console: skipped,
                # and said (the checks and the table count these)
                r.malformed.append(line)
                r.errors.append(f'malformed line: {line}')
            continue
        m = LOCKDEP_RE.search(line)
        if m:
            names = ' '.join(lines[i:i + 40])
            # the report's own lines: up to its stack backtrace or the
            # next report
            body = lines[i:i + 120]
            end = next((k for k, x in enumerate(body) if k and (
                'stack backtrace:' in x or LOCKDEP_RE.search(x))), len(body))
            classes = list(dict.fromkeys(LOCK_CLASS_RE.findall(
                ' '.join(body[:end]))))
            r.lockdep.append(LockdepReport(
                kind=m.group(1), nfsd_commit='nfsd_commit' in names,
                isolation_throttle='isolation_throttle' in names,
                classes=classes, reclaim_fs='RECLAIM_FS' in names))
        if 'blocked for more than' in line:
            r.hung_task_reports += 1
            m = HUNG_TASK_RE.search(line)
            # the report: up to its </TASK> or the next report
            stack = lines[i + 1:i + 80]
            end = next((k for k, s in enumerate(stack)
                        if '</TASK>' in s or 'blocked for more than' in s), len(stack))
            r.hung_tasks.append(HungTask(
                task=m.group(1) if m else '',
                release_wait=any('nfs_release_folio' in s for s in stack[:end]),
                localio=any(' nfs_local_' in s for s in stack[:end])))
        if 'Out of memory' in line:
            r.oom += 1
        if 'Kernel panic' in line:
            r.panic = True
    return r


def boot(kernel: Path | str, initramfs: Path | str, policy: str,
         params: dict[str, Any], log_path: Path, timeout: float,
         disk: Path | str | None = None, memory_mb: int = MEMORY_MB) -> Console:
    """Boots the guest once; returns the parsed console."""
    cmd = qemu_command(kernel, initramfs, policy, params, disk, memory_mb)
    timed_out = False
    # QEMU writes the console straight into the log: tail -f shows the boot
    with open(log_path, 'wb') as log:
        proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            timed_out = True
    text = Path(log_path).read_bytes().decode(errors='replace')
    r = parse_console(text)
    r.policy = policy
    r.qemu_timed_out = timed_out
    return r


# --- the table ----------------------------------------------------------------

def _delta(r: Console, prefix: str) -> int:
    return sum(v - r.vmstat_before.get(k, 0)
               for k, v in r.vmstat_after.items() if k.startswith(prefix))


def real_waits(r: Console) -> list[Wait]:
    """The events of @r that were waits: budget_spent ones did not sleep."""
    return [w for w in r.waits if w.result != 'budget_spent']


def budget_spent(r: Console) -> int:
    """The budget_spent events of @r: counted by the guest, or (consoles
    before the count) listed as waits."""
    if r.budget_spent is not None:
        return r.budget_spent
    return sum(w.result == 'budget_spent' for w in r.waits)


def trace_ok(r: Console) -> tuple[bool, str]:
    """Whether every wait event reached the console, and what was read."""
    if r.trace_overrun is None:
        return False, 'no trace_overrun line in the console'
    return r.trace_overrun == 0, f'{r.trace_overrun} events overwritten'


# The results of release waits that summary.json counts by result.
WAIT_RESULTS = ('committed', 'no_commit', 'timed_out', 'killed')


@dataclass
class Summary:
    """A policy's boots of the pressure scenario: a row of the table, an
    entry of summary.json (whose keys are these fields, in this order)."""
    policy: str
    params: list[str]
    bound_ms: int | None
    runs: int
    completed: int
    outcomes: dict[str, int]                # Outcome value -> boots
    hung_task_reports: int
    lockdep_reports: int
    lockdep_nfsd_commit: int
    oom: int
    waits: int
    waits_by_result: dict[str, int]
    budget_spent: int
    waits_by_nfsd: int
    wait_median_ms: float | None
    wait_max_ms: float | None
    # per boot:
    allocstall: list[int]
    pgsteal_direct: list[int]
    memcg_pgsteal: list[int]
    throughput_mb_s: float | None           # the median over the boots
    throttled_isolated: list[int | None]
    refaults: list[int]
    pswpout: list[int]
    isolated_left: list[int | None]
    data_ok: int
    malformed_lines: int                    # E2E lines skipped, all boots


def console_mb(r: Console) -> int | None:
    """The MiB the boot of @r wrote, from its `E2E: params mb=N` line;
    None for a console without one."""
    mb = _fields(r.values.get('params')).get('mb', '')
    return int(mb) if mb.isdigit() else None


def summarize(policy: str, runs: list[Console], mb: int) -> Summary:
    """@mb: the MiB written by a boot whose console does not say (no
    `E2E: params mb=` line); each other boot's throughput is its own mb."""
    waits = [w for r in runs for w in real_waits(r)]
    waited_ms = sorted(w.waited_us / 1000 for w in waits)
    done = [r for r in runs if r.result == 'completed']
    tput = [(console_mb(r) or mb) / r.write_seconds
            for r in done if r.write_seconds]
    return Summary(
        policy=policy,
        params=policy_params(policy),
        bound_ms=policy_bound(policy),
        runs=len(runs),
        completed=len(done),
        outcomes={o.value: sum(outcome(r) is o for r in runs) for o in Outcome},
        hung_task_reports=sum(r.hung_task_reports for r in runs),
        lockdep_reports=sum(len(r.lockdep) for r in runs),
        lockdep_nfsd_commit=sum(sum(d.nfsd_commit for d in r.lockdep)
                                for r in runs),
        oom=sum(r.oom for r in runs),
        waits=len(waits),
        waits_by_result={k: sum(w.result == k for w in waits)
                         for k in WAIT_RESULTS},
        budget_spent=sum(budget_spent(r) for r in runs),
        waits_by_nfsd=sum(w.task.startswith('nfsd') for w in waits),
        wait_median_ms=statistics.median(waited_ms) if waited_ms else None,
        wait_max_ms=waited_ms[-1] if waited_ms else None,
        allocstall=[_delta(r, 'allocstall') for r in runs],
        pgsteal_direct=[_delta(r, 'pgsteal_direct') for r in runs],
        memcg_pgsteal=[r.memcg.get('pgsteal', 0) for r in runs],
        throughput_mb_s=statistics.median(tput) if tput else None,
        throttled_isolated=[r.throttled_isolated for r in runs],
        refaults=[_delta(r, 'workingset_refault_') for r in runs],
        pswpout=[_delta(r, 'pswpout') for r in runs],
        isolated_left=[sum(r.isolated.values()) if r.isolated else None
                       for r in runs],
        data_ok=sum(r.data == 'ok' for r in runs),
        malformed_lines=sum(len(r.malformed) for r in runs),
    )


def _fmt(v: float | None, spec: str = '.1f') -> str:
    return '-' if v is None else format(v, spec)


def table(summaries: list[Summary]) -> str:
    head = ('| policy | runs | completed | hung | panic | OOM | no result | '
            'hung-task reports | '
            'lockdep reports (nfsd_commit) | release waits: count '
            '(committed/timed out) | median / max ms | budget ms per pass | '
            'global direct reclaim stalls | memcg pages reclaimed | '
            'writers MB/s | data ok |')
    rows = [head, '|' + '---|' * 16]
    for s in summaries:
        bound = ('unbounded' if s.bound_ms is None else
                 'none' if s.bound_ms == 0 else str(s.bound_ms))
        o = s.outcomes
        rows.append(
            f"| {s.policy} | {s.runs} | {s.completed} | "
            f"{o['hung']} | {o['panic']} | {o['oom']} | {o['no result']} | "
            f"{s.hung_task_reports} | {s.lockdep_reports} "
            f"({s.lockdep_nfsd_commit}) | {s.waits} "
            f"({s.waits_by_result['committed']}/"
            f"{s.waits_by_result['timed_out']}) | "
            f"{_fmt(s.wait_median_ms)} / {_fmt(s.wait_max_ms)} | {bound} | "
            f"{'/'.join(str(a) for a in s.allocstall)} | "
            f"{'/'.join(str(a) for a in s.memcg_pgsteal)} | "
            f"{_fmt(s.throughput_mb_s, '.2f')} | {s.data_ok}/{s.completed} |")
    bad = [f'{s.policy} {s.malformed_lines}' for s in summaries
           if s.malformed_lines]
    if bad:
        rows += ['', f'Malformed E2E lines skipped (by policy): '
                     f'{", ".join(bad)}.']
    return '\n'.join(rows)


def _float(v: str | None) -> float | None:
    if v is None:
        return None
    try:
        return float(v)
    except ValueError:
        return None


def _fields(text: str | None) -> dict[str, str]:
    """The KEY=VALUE words of an E2E line's text."""
    return dict(kv.split('=', 1) for kv in (text or '').split() if '=' in kv)


def _int_fields(text: str) -> dict[str, int]:
    """The KEY=N words of an E2E line's text, every word one of them;
    ValueError for any other word or an empty line (a malformed line)."""
    counts = {}
    for word in text.split():
        key, eq, value = word.partition('=')
        if not key or not eq or not value.isdigit():
            raise ValueError(f'not KEY=N: {word!r}')
        counts[key] = int(value)
    if not counts:
        raise ValueError('no KEY=N word')
    return counts


def _percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank @q percentile of @values."""
    values = sorted(values)
    return values[max(0, math.ceil(q * len(values)) - 1)] if values else None


# A bounded wait's 90th percentile may exceed its budget by this much: a
# few ticks of scheduling under TCG (measured: 0.5-11 ms over 100 ms).  Of
# 17 waits, the 90th percentile is the second longest: one wait delayed by
# the host is tolerated (the 1 s margin still bounds it), two are not.
STALL_P90_SLACK_MS = 25


def stall_localio(r: Console) -> bool:
    """Whether @r is a boot of the stall with LOCALIO on (its E2E: params
    line says localio=1)."""
    return _fields(r.values.get('params')).get('localio') == '1'


def stall_unexpected_reports(policy: str, r: Console) -> list[str]:
    """The kernel reports of a stall boot that the scenario does not expect:
    it expects the hung-task reports of the task whose fsync waits for the
    suspended device (nfsd; with LOCALIO an nfslocaliod worker, a
    kworker), and with no bound, unless LOCALIO serves the COMMIT, lockdep's
    report of the wait on nfsd."""
    localio = stall_localio(r)
    # with LOCALIO, a worker's hung-task report is expected when every
    # worker reported is in LOCALIO's I/O; nfsd's is not expected then
    workers_ok = all(t.localio for t in r.hung_tasks if t.task.startswith('kworker/'))
    out = []
    for line in r.reports:
        if line.endswith('Call Trace:'):
            continue        # the stack of a report, judged by its header
        m = HUNG_TASK_RE.search(line)
        if m and (m.group(1) == 'nfsd' and not localio
                  or localio and workers_ok and m.group(1).startswith('kworker/')):
            continue
        if policy_bound(policy) is None and not localio and LOCKDEP_RE.search(line):
            continue
        out.append(line)
    return out


# A check of a boot: what is checked, whether it holds, what was seen.
Check = tuple[str, bool, str]


def malformed_check(r: Console) -> Check:
    """Every E2E line of @r was read: none skipped as malformed."""
    return ('every E2E line was read (none malformed)', not r.malformed,
            f'{len(r.malformed)} malformed: {r.malformed[:3]}')


def _map_primed_check(r: Console, map_name: str, request: str) -> Check:
    """Once the nfsd threads started, before the mount (so before any
    @request), lockdep knew @map_name -> fs_reclaim, read from /proc/lockdep
    (E2E: @map_name_deps, the map's direct dependencies).  That the map is
    held as a reader is the KUnit suite nfsd_commit_lockdep's to check."""
    key = f'{map_name}_deps'
    deps = r.values.get(key)
    return (f'nfsd started: lockdep knew {map_name} -> fs_reclaim before any {request}',
            deps is not None and 'fs_reclaim' in deps.split(),
            f'{key} {deps!r}, debug_locks {r.values.get("debug_locks")!r}'
            ' (absent: no /proc/lockdep; debug_locks 0: lockdep was off)')


def primed_check(r: Console) -> Check:
    """nfsd()'s priming of its COMMIT map (nfsd_commit -> fs_reclaim): every
    boot checks it."""
    return _map_primed_check(r, 'nfsd_commit', 'COMMIT')


def write_primed_check(r: Console) -> Check:
    """nfsd()'s priming of its WRITE map (nfsd_write -> fs_reclaim): the
    short run checks it; the stall's and the cycle's boots check the COMMIT
    map's only."""
    return _map_primed_check(r, 'nfsd_write', 'WRITE')


def stall_checks(policy: str, r: Console) -> list[Check]:
    """The stall scenario's checks of one boot: (what, ok, detail) triples."""
    bound = policy_bound(policy)
    waits = real_waits(r)
    v = r.values
    state = r.stall_state or {}
    commits = r.commits_before_reclaim or {}
    mb_text = _fields(v.get('params')).get('mb', '')
    mb = int(mb_text) if mb_text.isdigit() else 0
    reclaim_s = _float(v.get('reclaim_seconds'))
    unexpected = stall_unexpected_reports(policy, r)
    localio = stall_localio(r)
    local = _fields(v.get('localio'))
    checks: list[Check] = [
        malformed_check(r),
        primed_check(r),
        ('the boot ended (no panic, no OOM, QEMU not timed out)',
         r.ended and not r.panic and not r.oom and not r.qemu_timed_out,
         f'ended {r.ended}, panic {r.panic}, oom {r.oom}, '
         f'qemu timed out {r.qemu_timed_out} {r.errors}'),
        ('no kernel report but nfsd\'s hung task (and lockdep\'s, unbounded)'
         if not localio else
         'no kernel report but an nfslocaliod worker\'s hung task in LOCALIO\'s I/O',
         not unexpected, f'{unexpected[:3]}'),
        ('every wait event reached the console (no trace-buffer overrun)',
         *trace_ok(r)),
        ('the COMMIT was held: every page written, none dirty or under writeback',
         bool(state) and mb > 0 and state.get('file', 0) >= mb << 20
         and state.get('file_dirty') == 0 and state.get('file_writeback') == 0,
         f'stall_state {r.stall_state}, mb {mb} {r.errors}'),
        ('a COMMIT was sent and not answered before the reclaim',
         commits.get('sent', 0) > commits.get('done', 0),
         f'commits {r.commits_before_reclaim} {r.errors}'),
    ]
    if not localio and 'localio' in v:
        # the control of LOCALIO's count (consoles before 2026-12-04
        # evening have no E2E: localio line)
        checks.append(
            ('nfsd completed the COMMIT (nfsd:nfsd_compound_status, OP_COMMIT)',
             local.get('nfsd_commits', '').isdigit() and int(local['nfsd_commits']) >= 1
             and local.get('overrun') == '0', f'localio {v.get("localio")!r}'))
    if localio:
        checks.append(
            ('LOCALIO served the mount: nfs:nfs_local_enable, localio_enabled Y, '
             'no COMMIT completed by nfsd',
             local.get('enabled', '').isdigit() and int(local['enabled']) > 0
             and local.get('param') == 'Y' and local.get('nfsd_commits') == '0'
             and local.get('overrun') == '0', f'localio {v.get("localio")!r}'))
    if bound is None:
        in_dump = [t for t in r.blocked_tasks or []
                   if t.pid == v.get('reclaimer_pid')]
        checks += [
            ('the reclaim hung in the release wait',
             v.get('reclaim') == 'hung', f'reclaim {v.get("reclaim")}'),
            ('the reclaimer sleeps (D) in nfs_release_folio() (/proc/PID/stack)',
             v.get('reclaimer_state') == 'D'
             and 'nfs_release_folio' in v.get('reclaimer_stack', '').split(),
             f'state {v.get("reclaimer_state")}, stack {v.get("reclaimer_stack")}'),
            ('the blocked-task dump (sysrq-w) shows it in nfs_release_folio()',
             any(t.release_wait for t in in_dump),
             f'dump {shown(r.blocked_tasks)}'),
            (f'SIGKILL ended it within {STALL_KILL_S} s',
             v.get('kill') == 'ended'
             and (_float(v.get('kill_seconds')) or 0) <= STALL_KILL_S,
             f'kill {v.get("kill")} after {v.get("kill_seconds")} s'),
            ('its wait, without a bound, says it was killed',
             any(w.result == 'killed' and w.budget_ms == -1 for w in waits),
             f'waits {shown(waits[:3])}'),
            ('lockdep reports the wait on nfsd (nfsd_commit)',
             any(d.nfsd_commit for d in r.lockdep), f'{shown(r.lockdep)}')
            if not localio else
            ('no lockdep report (a wait for LOCALIO\'s COMMIT is not shown to lockdep)',
             not r.lockdep, f'{shown(r.lockdep)}'),
        ]
    else:
        budget_s = bound / 1000
        limit = STALL_RECLAIM_CALLS * budget_s + STALL_RECLAIM_SLACK_S
        checks += [
            ('the reclaim returned, having freed nothing (EAGAIN, pgsteal 0)',
             v.get('reclaim') == 'returned' and v.get('reclaim_rc') == '1'
             and r.memcg.get('pgsteal') == 0,
             f'reclaim {v.get("reclaim")}, rc {v.get("reclaim_rc")}, '
             f'pgsteal {r.memcg.get("pgsteal")}'),
            (f'within {STALL_RECLAIM_CALLS} budgets + {STALL_RECLAIM_SLACK_S} s',
             reclaim_s is not None and reclaim_s <= limit,
             f'{reclaim_s} s > {limit} s'),
            ('no lockdep report (a bounded wait is not shown to lockdep)',
             not r.lockdep, f'{shown(r.lockdep)}'),
        ]
        if bound == 0:
            checks.append(('no release wait', not waits, f'{len(waits)} waits'))
        else:
            waited_ms = [w.waited_us / 1000 for w in waits]
            p90 = _percentile(waited_ms, 0.90)
            over = [w for w in waits
                    if w.waited_us > (w.budget_ms + MARGIN_MS) * 1000]
            checks += [
                ('release waits happened, each timed out',
                 bool(waits) and all(w.result == 'timed_out' for w in waits),
                 f'results {[w.result for w in waits][:5]}'),
                (f'one wait per reclaim call: {STALL_RECLAIM_CALLS}',
                 len(waits) == STALL_RECLAIM_CALLS, f'{len(waits)} waits'),
                (f'90th percentile within the budget + {STALL_P90_SLACK_MS} ms',
                 p90 is not None and p90 <= bound + STALL_P90_SLACK_MS,
                 f'p90 {p90} ms'),
                (f'every wait within its budget + {MARGIN_MS} ms', not over,
                 f'{len(over)} over: {shown(over[:3])}'),
            ]
    checks += [
        ('the writer finished once the device was resumed',
         r.result == 'completed', f'result {r.result}'),
        ('the file on the server is the data written', r.data == 'ok',
         f'data {r.data}'),
    ]
    return checks


def nfsd_reclaim(r: Console) -> dict[str, int | None]:
    """What the guest counted of nfsd's reclaim (E2E: nfsd_reclaim): its
    direct reclaims (mm_vmscan_direct_reclaim_begin), its node reclaims
    (mm_vmscan_node_reclaim_begin), the NFS COMMITs it
    sent (nfs_initiate_commit: only nfs_release_folio() sends one from
    an nfsd thread, for an uncommitted folio reclaim met) and the events
    lost to an overrun; None for a count the console lacks."""
    f = _fields(r.values.get('nfsd_reclaim'))
    return {k: int(f[k]) if f.get(k, '').isdigit() else None
            for k in ('direct', 'node', 'commits_sent', 'overrun')}


def cycle_unexpected_lockdep(policy: str, r: Console) -> list[LockdepReport]:
    """The lockdep reports of a cycle boot of the branch that are not the
    unbounded wait's on nfsd (nfsd_commit): none are expected."""
    return [d for d in r.lockdep
            if not (policy_bound(policy) is None and d.nfsd_commit)]


# A check of a cycle boot: ok None is a check skipped, because the boot
# did not exercise the cycle (cycle_exercised(), itself a check that fails).
CycleCheck = tuple[str, bool | None, str]

CYCLE_EXERCISED = ('the cycle was exercised: nfsd, in reclaim, met a folio whose '
                   'request awaits a COMMIT (nfsd sent a COMMIT from reclaim, or '
                   'sleeps in nfs_release_folio())')


# After drop_caches, the folios awaiting a COMMIT (NFS counts them in
# NR_WRITEBACK) must be nearly all that was uncommitted (90%) and nearly
# all the file pages (within 1 MiB).
CYCLE_SETUP = ('setup: before the bulk write the file pages were folios awaiting '
               'a COMMIT (Writeback:, 90% of them kept, other file pages < 1 MiB)')


def cycle_exercised(r: Console) -> bool:
    """Whether nfsd's reclaim met a folio whose request awaits a COMMIT:
    it sent that COMMIT (nfs_release_folio() sends one for a request on the
    commit list), or it sleeps in nfs_release_folio() (a kernel that waits
    there: also for a COMMIT already in flight, which sends nothing)."""
    return bool(nfsd_reclaim(r)['commits_sent']) or any(
        t.release_wait for t in r.nfsd_threads)


def cycle_checks(kernel: str, policy: str, r: Console) -> list[CycleCheck]:
    """The cycle scenario's checks of one boot: the branch must complete
    with nfsd reclaiming and never waiting; the kernel before cce0be6eb497
    must hang with an nfsd thread asleep in nfs_release_folio().  That
    nfsd met such a folio (cycle_exercised()) is checked in every boot; when
    it did not, the hang checks of the kernel before cce0be6eb497, which
    need it, are skipped (ok None) rather than failed four times more."""
    n = nfsd_reclaim(r)
    params = _fields(r.values.get('params'))
    exercised = cycle_exercised(r)
    state = _fields(r.values.get('cycle_state'))
    uncommitted = state.get('uncommitted_kb', '')
    checks: list[CycleCheck] = [
        malformed_check(r),
        primed_check(r),
        ('one nfsd thread, the writers in the root cgroup (scenario cycle)',
         params.get('threads') == '1' and r.values.get('scenario') == 'cycle',
         f'params {r.values.get("params")!r}, scenario {r.values.get("scenario")!r}'),
        ('nfsd reclaimed (direct or node reclaims by nfsd)',
         bool(n['direct'] or n['node']) and n['overrun'] == 0,
         f'nfsd_reclaim {r.values.get("nfsd_reclaim")!r}'),
        (CYCLE_SETUP,
         all(state.get(k, '').isdigit() for k in ('uncommitted_kb', 'left_kb', 'file_kb'))
         and int(uncommitted) > 0
         and int(state['left_kb']) * 10 >= int(uncommitted) * 9
         and int(state['file_kb']) - int(state['left_kb']) <= 1024,
         f'cycle_state {r.values.get("cycle_state")!r}'),
        (CYCLE_EXERCISED, exercised,
         f'nfsd_reclaim {r.values.get("nfsd_reclaim")!r}, '
         f'nfsd threads {shown(r.nfsd_threads)}'),
    ]
    if kernel == 'branch':
        by_nfsd = [w for w in real_waits(r) if w.task.startswith('nfsd')]
        unexpected = cycle_unexpected_lockdep(policy, r)
        left = {k: v for k, v in r.isolated.items() if v}
        checks += [
            ('the run completed (the bulk write too)',
             outcome(r) is Outcome.COMPLETED and r.values.get('bulk_rc') == '0',
             f'{outcome(r).value}: result {r.result}, bulk_rc '
             f'{r.values.get("bulk_rc")} {r.errors}'),
            ('no release wait by an nfsd thread', not by_nfsd,
             f'{len(by_nfsd)} waits by nfsd: {shown(by_nfsd[:3])}'),
            ('no hung-task report', r.hung_task_reports == 0,
             f'{r.hung_task_reports} reports: {shown(r.hung_tasks[:3])}'),
            ('no lockdep report (but the unbounded wait\'s on nfsd_commit), '
             'lockdep on to the end (but after that report)',
             not unexpected and (policy_bound(policy) is None
                                 or r.lockdep_stats.get('debug_locks') == 1),
             f'{shown(unexpected)}, debug_locks {r.lockdep_stats.get("debug_locks")}'),
            ('every wait event reached the console (no trace-buffer overrun)',
             *trace_ok(r)),
            ('the data read back is the data written', r.data == 'ok',
             f'data {r.data}'),
            ('NR_ISOLATED_* back to 0 after the run', bool(r.isolated) and not left,
             f'isolated {r.isolated}'),
        ]
    else:
        in_dump = [t for t in r.blocked_tasks or [] if t.task == 'nfsd']
        hang: list[CycleCheck] = [
            ('the writers hung', r.result == 'hung', f'result {r.result}'),
            ('an nfsd thread sleeps (D) in nfs_release_folio() (/proc/PID/stack)',
             any(t.state == 'D' and t.release_wait for t in r.nfsd_threads),
             f'nfsd threads {shown(r.nfsd_threads)}'),
            ('the blocked-task dump (sysrq-w) shows nfsd in nfs_release_folio()',
             any(t.release_wait for t in in_dump),
             f'nfsd in the dump {shown(in_dump)}'),
            ('lockdep (the branch\'s model, which this kernel keeps) reports '
             'a wait on nfsd (nfsd_commit)',
             any(d.nfsd_commit for d in r.lockdep), f'{shown(r.lockdep)}'),
        ]
        checks += [(what, ok if exercised else None, detail)
                   for what, ok, detail in hang]
    return checks


@dataclass
class CycleSummary:
    """A kernel's and policy's boots of the cycle scenario: a row of the
    table, an entry of summary.json (whose keys are these fields)."""
    kernel: str
    policy: str
    params: list[str]
    runs: int
    checks_passed: int                      # boots with no check failed
    exercised: int                          # boots that met the cycle
    checks: list[list['CheckResult']]       # per boot
    outcomes: dict[str, int]                # Outcome value -> boots
    nfsd_direct: list[int | None]           # per boot
    nfsd_node: list[int | None]             # per boot
    nfsd_commits_sent: list[int | None]     # per boot
    nfsd_in_release_wait: int               # boots with nfsd asleep there
    waits: int
    waits_by_nfsd: int
    wait_max_ms: float | None
    lockdep_reports: int
    lockdep_nfsd_commit: int
    hung_task_reports: int
    throughput_mb_s: float | None           # the median over completed boots
    data_ok: int


def summarize_cycle(kernel: str, policy: str, runs: list[Console]) -> CycleSummary:
    waits = [w for r in runs for w in real_waits(r)]
    waited_ms = sorted(w.waited_us / 1000 for w in waits)
    checks = [cycle_checks(kernel, policy, r) for r in runs]
    done = [r for r in runs if r.result == 'completed']
    tput = [(console_mb(r) or 0) / r.write_seconds
            for r in done if r.write_seconds and console_mb(r)]
    return CycleSummary(
        kernel=kernel,
        policy=policy,
        params=policy_params(policy),
        runs=len(runs),
        checks_passed=sum(all(ok is not False for _, ok, _ in c) for c in checks),
        exercised=sum(cycle_exercised(r) for r in runs),
        checks=[[CheckResult(check=what, ok=ok, detail='' if ok else detail)
                 for what, ok, detail in c] for c in checks],
        outcomes={o.value: sum(outcome(r) is o for r in runs) for o in Outcome},
        nfsd_direct=[nfsd_reclaim(r)['direct'] for r in runs],
        nfsd_node=[nfsd_reclaim(r)['node'] for r in runs],
        nfsd_commits_sent=[nfsd_reclaim(r)['commits_sent'] for r in runs],
        nfsd_in_release_wait=sum(any(t.release_wait for t in r.nfsd_threads)
                                 for r in runs),
        waits=len(waits),
        waits_by_nfsd=sum(w.task.startswith('nfsd') for w in waits),
        wait_max_ms=waited_ms[-1] if waited_ms else None,
        lockdep_reports=sum(len(r.lockdep) for r in runs),
        lockdep_nfsd_commit=sum(sum(d.nfsd_commit for d in r.lockdep)
                                for r in runs),
        hung_task_reports=sum(r.hung_task_reports for r in runs),
        throughput_mb_s=statistics.median(tput) if tput else None,
        data_ok=sum(r.data == 'ok' for r in runs),
    )


def table_cycle(summaries: list[CycleSummary]) -> str:
    head = ('| kernel | policy | runs | no check failed | cycle exercised | '
            'completed / hung | '
            'nfsd direct / node reclaims | COMMITs sent by nfsd | '
            'nfsd asleep in nfs_release_folio() | release waits (by nfsd) | '
            'max wait ms | lockdep reports (nfsd_commit) | '
            'hung-task reports | writers MB/s | data ok |')
    rows = [head, '|' + '---|' * 15]
    for s in summaries:
        o = s.outcomes
        rows.append(
            f"| {s.kernel} | {s.policy} | {s.runs} | {s.checks_passed}/{s.runs} | "
            f"{s.exercised}/{s.runs} | {o['completed']} / {o['hung']} | "
            f"{'/'.join('-' if v is None else str(v) for v in s.nfsd_direct)} / "
            f"{'/'.join('-' if v is None else str(v) for v in s.nfsd_node)} | "
            f"{'/'.join('-' if v is None else str(v) for v in s.nfsd_commits_sent)} | "
            f"{s.nfsd_in_release_wait} | {s.waits} ({s.waits_by_nfsd}) | "
            f"{_fmt(s.wait_max_ms)} | {s.lockdep_reports} "
            f"({s.lockdep_nfsd_commit}) | {s.hung_task_reports} | "
            f"{_fmt(s.throughput_mb_s, '.2f')} | {s.data_ok}/{o['completed']} |")
    return '\n'.join(rows)


class CheckResult(TypedDict):
    """A check of a boot in summary.json; its detail only if it failed or
    (a cycle's, ok None) was skipped."""
    check: str
    ok: bool | None
    detail: str


@dataclass
class StallSummary:
    """A policy's boots of the stall scenario: a row of the table, an entry
    of summary.json (whose keys are these fields, in this order)."""
    policy: str
    params: list[str]
    bound_ms: int | None
    runs: int
    checks_passed: int                      # boots that passed every check
    checks: list[list[CheckResult]]         # per boot
    reclaim_returned: int
    reclaim_hung: int
    reclaim_seconds: list[float | None]     # per boot
    killed_ok: int
    waits: int
    waits_by_result: dict[str, int]
    budget_spent: int
    wait_max_ms: float | None
    hung_task_reports: int
    hung_in_release_wait: int
    lockdep_reports: int
    completed: int
    data_ok: int


def summarize_stall(policy: str, runs: list[Console]) -> StallSummary:
    waits = [w for r in runs for w in real_waits(r)]
    waited_ms = sorted(w.waited_us / 1000 for w in waits)
    checks = [stall_checks(policy, r) for r in runs]
    return StallSummary(
        policy=policy,
        params=policy_params(policy),
        bound_ms=policy_bound(policy),
        runs=len(runs),
        checks_passed=sum(all(ok for _, ok, _ in c) for c in checks),
        checks=[[CheckResult(check=what, ok=ok, detail='' if ok else detail)
                 for what, ok, detail in c] for c in checks],
        reclaim_returned=sum(r.values.get('reclaim') == 'returned' for r in runs),
        reclaim_hung=sum(r.values.get('reclaim') == 'hung' for r in runs),
        reclaim_seconds=[_float(r.values.get('reclaim_seconds')) for r in runs],
        killed_ok=sum(r.values.get('kill') == 'ended' for r in runs),
        waits=len(waits),
        waits_by_result={k: sum(w.result == k for w in waits)
                         for k in WAIT_RESULTS},
        budget_spent=sum(budget_spent(r) for r in runs),
        wait_max_ms=waited_ms[-1] if waited_ms else None,
        hung_task_reports=sum(r.hung_task_reports for r in runs),
        hung_in_release_wait=sum(t.release_wait for r in runs
                                 for t in r.hung_tasks),
        lockdep_reports=sum(len(r.lockdep) for r in runs),
        completed=sum(r.result == 'completed' for r in runs),
        data_ok=sum(r.data == 'ok' for r in runs),
    )


def table_stall(summaries: list[StallSummary]) -> str:
    head = ('| policy | runs | all checks | reclaim returned / hung | reclaim s '
            '| release waits (timed out/killed) | budget_spent events | max wait ms '
            '| hung-task reports (in the release wait) | SIGKILL ended it '
            '| lockdep reports | writer done after resume | data ok |')
    rows = [head, '|' + '---|' * 13]
    for s in summaries:
        secs = '/'.join(_fmt(v, '.2f') for v in s.reclaim_seconds)
        rows.append(
            f"| {s.policy} | {s.runs} | {s.checks_passed}/{s.runs} | "
            f"{s.reclaim_returned} / {s.reclaim_hung} | {secs} | "
            f"{s.waits} ({s.waits_by_result['timed_out']}/"
            f"{s.waits_by_result['killed']}) | {s.budget_spent} | "
            f"{_fmt(s.wait_max_ms)} | {s.hung_task_reports} "
            f"({s.hung_in_release_wait}) | {s.killed_ok} | "
            f"{s.lockdep_reports} | {s.completed} | {s.data_ok} |")
    return '\n'.join(rows)


def read_runs(results: Path, policy: str) -> list[Console]:
    """The parsed consoles of results/<policy>.<k>.log, in order."""
    runs, k = [], 0
    while (results / f'{policy}.{k}.log').is_file():
        r = parse_console((results / f'{policy}.{k}.log').read_text(errors='replace'))
        r.policy = policy
        runs.append(r)
        k += 1
    return runs


def write_results(results: Path,
                  summaries: Sequence[Any],
                  md: str) -> None:
    results.mkdir(parents=True, exist_ok=True)
    (results / 'summary.json').write_text(
        json.dumps([asdict(s) for s in summaries], indent=2) + '\n')
    (results / 'table.md').write_text(md + '\n')
