# SPDX-License-Identifier: GPL-2.0
"""Running the kernel tree's kunit.py the way this branch does: x86_64 under
QEMU (TCG: kunit.py's x86_64 config never passes -enable-kvm), all cores,
a persistent build directory per configuration and ccache, all outside the
repository."""

import argparse
import contextlib
import fcntl
import importlib.util
import json
import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, Callable, Iterator, NoReturn

# an add_*_opts() function of kunit.py: adds a group of options to a parser
OptionGroup = Callable[[argparse.ArgumentParser], None]

import cli
import paths
from cli import ToolError

ARCH = 'x86_64'
# kunit.py's default --timeout is 300 s for the whole run.  One suite runs
# in a few seconds; ten minutes still leaves a hung kernel room to be caught
# well inside CI's 90 minutes.
DEFAULT_TIMEOUT = 600


# Kernel options every suite boots with (kunit.py exec --kernel_args): an
# oops panics, and a panic reboots at once, which ends QEMU (kunit.py runs
# it with -no-reboot), so a suite that oopses with a lock held costs
# seconds, not the whole --timeout.
KERNEL_ARGS = ['oops=panic', 'panic=-1']

# The starts of the kernel's reports in a console: warnings (lockdep's
# among them), BUGs (KASAN, KFENCE, sleeping in atomic, soft lockups),
# UBSAN, oopses, panics, hung tasks, RCU stalls, and any stack trace.
REPORT_RE = re.compile(
    r'(?:^|\] )(WARNING:|BUG:|UBSAN:|Oops|kernel BUG at|general protection fault|'
    r'Kernel panic|Call Trace:|INFO: task .* blocked for more than|'
    r'INFO: rcu_\w+ (?:self-)?detected stall|rcu: INFO: rcu_\w+ (?:self-)?detected stall)')
# A suite announces a report it provokes on purpose with a line
# "expect report: <text>" (kunit_info()): the next report whose first line
# holds <text> is allowed, with the stack traces that follow it up to the
# next KTAP result line.
EXPECT_RE = re.compile(r'expect report: (.+?)\s*$')
KTAP_RESULT_RE = re.compile(r'^\s*(?:\[[ \d.]+\] )?\s*(?:not )?ok \d+')


def console_reports(text: str) -> list[str]:
    """The lines of @text that start a kernel report no suite announced."""
    expected: list[str] = []
    found: list[str] = []
    allowed = False
    for line in text.splitlines():
        m = EXPECT_RE.search(line)
        if m:
            expected.append(m.group(1))
            continue
        if KTAP_RESULT_RE.match(line):
            allowed = False
            continue
        m = REPORT_RE.search(line)
        if not m:
            continue
        if m.group(1) == 'Call Trace:' and allowed:
            continue
        hit = next((e for e in expected if e in line), None)
        if hit is not None:
            expected.remove(hit)
            allowed = True
            continue
        found.append(line.strip())
    return found


# a config or menuconfig line, a comment after it allowed
KCONFIG_SYMBOL_RE = re.compile(r'^\s*(?:menu)?config\s+(\w+)\s*(?:#.*)?$', re.M)


def kconfig_symbols(tree: Path) -> set[str]:
    """Every symbol a Kconfig file of @tree defines (config or menuconfig)."""
    symbols: set[str] = set()
    for path in tree.rglob('Kconfig*'):
        try:
            symbols.update(KCONFIG_SYMBOL_RE.findall(path.read_text(errors='replace')))
        except OSError:
            continue
    return symbols


def kunit_py(tree: Path) -> Path:
    path = Path(tree) / 'tools/testing/kunit/kunit.py'
    if not path.is_file():
        raise ToolError(f'{path} not found: is {tree} a prepared kernel tree? '
                        f'(run tools/prepare)', cli.EXIT_ENV)
    return path


# A variant's name names its build directory ($RECLAIM_BUILD_DIR/<variant>)
# and its results ($RECLAIM_RESULTS/<variant>/, tools/run-suites): these
# are the tools' own, refused as names of kunit/variants/*.config.
RESERVED_VARIANTS = {
    'default': '.kunitconfig alone, without a variant',
    'e2e': "tools/e2e's results and the guest kernel's build",
    'bisect': "tools/check-series bisect's build",
    'postings': "tools/check-series postings' build",
    'mutants': "tools/mutants' build and results",
    'kunit.json': "tools/kunit's results",
    # harness.build_dir() of the kernels made by a diff (harness.DIFF_KERNELS)
    # and of the base kernels (harness.BASE_KERNELS: one build directory)
    **{f'e2e-{kernel}': f'tools/e2e build --kernel {kernel}\'s build'
       for kernel in ('pre-cce0be6eb497', 'no-memcg-map', 'no-rr-walk', 'base',
                      'no-reclaim-fs', 'no-pnfs-nofs', 'rt', 'rt-no-rr-walk')},
}


def variant_files() -> dict[str, Path]:
    """kunit/variants/*.config by name; one with a reserved name is
    refused (exit 2)."""
    files = {p.stem: p for p in
             sorted((paths.REPO / 'kunit' / 'variants').glob('*.config'))}
    for name, p in files.items():
        if name in RESERVED_VARIANTS:
            raise ToolError(f'{p.relative_to(paths.REPO)}: the name {name!r} '
                            f'is taken ({RESERVED_VARIANTS[name]}): rename '
                            f'the variant', cli.EXIT_USAGE)
    return files


def kunitconfigs(variant: str = 'default'
                 ) -> tuple[list[Path], list[str]]:
    """The kunitconfig fragments and the extra options of a configuration:
    the top-level .kunitconfig, plus, for any other variant, the lines of
    kunit/variants/<variant>.config.  Those go to kunit.py as --kconfig_add,
    which may override what .kunitconfig sets ("# CONFIG_X is not set")."""
    configs = [paths.REPO / '.kunitconfig']
    options = []
    files = variant_files()
    if variant != 'default':
        extra = files.get(variant)
        if extra is None or not extra.is_file():
            raise ToolError(f'unknown variant {variant!r}; known: default, '
                            f'{", ".join(files) or "(none)"}', cli.EXIT_USAGE)
        for line in extra.read_text().splitlines():
            line = line.strip()
            if line.startswith('CONFIG_') or \
                    (line.startswith('# CONFIG_') and line.endswith(' is not set')):
                options.append(line)
    return configs, options


def variants() -> list[str]:
    """default and kunit/variants/*.config's names (exit 2 for a reserved
    one)."""
    return ['default', *variant_files()]


def environment() -> dict[str, str]:
    """ccache in front of gcc (Debian's masquerade directory), its cache
    outside the repository."""
    env = dict(os.environ)
    masq = '/usr/lib/ccache'
    if os.path.isdir(masq) and masq not in env.get('PATH', '').split(':'):
        env['PATH'] = masq + ':' + env.get('PATH', '')
    env.setdefault('CCACHE_DIR', str(paths.ccache_dir()))
    env.setdefault('CCACHE_MAXSIZE', '5G')
    # Compile lines differ only in the tree's path between trees.
    env.setdefault('CCACHE_BASEDIR', str(paths.tree_dir()))
    return env


def build_args(build: Path, variant: str = 'default', jobs: int | None = None,
               kunitconfig: Path | None = None,
               extra: Path | None = None) -> list[str]:
    """Options of kunit.py run/build/config for one configuration: a variant
    of .kunitconfig (with @extra, another fragment kunit.py merges into it:
    the end-to-end guest's), or another kunitconfig file altogether.
    Without @jobs, kunit.py's own default applies (the CPUs this process
    may run on)."""
    configs, options = ([kunitconfig], []) if kunitconfig else kunitconfigs(variant)
    if extra:
        configs.append(extra)
    return [f'--build_dir={build}', f'--arch={ARCH}',
            *([f'--jobs={jobs}'] if jobs else []),
            *(f'--kunitconfig={c}' for c in configs),
            *(f'--kconfig_add={o}' for o in options)]


def exec_args(build: Path) -> list[str]:
    """Options of kunit.py exec for an existing build."""
    return [f'--build_dir={build}', f'--arch={ARCH}',
            *(f'--kernel_args={a}' for a in KERNEL_ARGS)]


@contextlib.contextmanager
def build_lock(build: Path | str, who: str,
               elsewhere: str = 'point RECLAIM_BUILD_DIR elsewhere') -> Iterator[None]:
    """Holds the build directory for one tool: two tools never build in (or
    boot from) one build directory at once.  Raises ToolError (exit 4) at
    once, naming the holder, if another tool has it; @elsewhere says how to
    use another directory."""
    build = Path(build)
    build.mkdir(parents=True, exist_ok=True)
    path = build / '.kbranch-lock'
    with open(path, 'a+') as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or 'another process'
            raise ToolError(f'{build} is in use by {holder}: two tools never '
                            f'build in one build directory at once; wait for '
                            f'it to finish, or {elsewhere}', cli.EXIT_REFUSED) from None
        f.seek(0)
        f.truncate()
        f.write(f'{who} (pid {os.getpid()})\n')
        f.flush()
        try:
            yield
        finally:
            f.seek(0)
            f.truncate()
            fcntl.flock(f, fcntl.LOCK_UN)


_HELD = contextlib.ExitStack()


def hold_build(build: Path, who: str,
               elsewhere: str = 'point RECLAIM_BUILD_DIR elsewhere') -> None:
    """build_lock() for the rest of this process (a command-line tool)."""
    _HELD.enter_context(build_lock(build, who, elsewhere))


# --- kunit.py's command line ---------------------------------------------------

# 6.12's kunit.py rewrites a bare --json or --raw_output (massage_argv()).
_PSEUDO_BOOL = {'--json': 'stdout', '--raw_output': 'kunit'}
ACTIONS = ('run', 'config', 'build', 'exec', 'parse')


class UsageError(Exception):
    """An argument kunit.py would refuse."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(message)


def _common_6_12(p: argparse.ArgumentParser) -> None:
    p.add_argument('--build_dir', type=str, default='.kunit', metavar='DIR')
    p.add_argument('--make_options', action='append', metavar='X=Y')
    p.add_argument('--alltests', action='store_true')
    p.add_argument('--kunitconfig', action='append', metavar='PATHS')
    p.add_argument('--kconfig_add', action='append', metavar='CONFIG_X=Y')
    p.add_argument('--arch', type=str, default='um', metavar='ARCH')
    p.add_argument('--cross_compile', metavar='PREFIX')
    p.add_argument('--qemu_config', type=str, metavar='FILE')
    p.add_argument('--qemu_args', action='append', metavar='')


def _build_6_12(p: argparse.ArgumentParser) -> None:
    p.add_argument('--jobs', type=int, metavar='N')


def _exec_6_12(p: argparse.ArgumentParser) -> None:
    p.add_argument('--timeout', type=int, default=300, metavar='SECONDS')
    p.add_argument('filter_glob', type=str, nargs='?', default='',
                   metavar='filter_glob')
    p.add_argument('--filter', type=str, default='')
    p.add_argument('--filter_action', type=str, choices=['skip'])
    p.add_argument('--kernel_args', action='append', metavar='')
    p.add_argument('--run_isolated', type=str, choices=['suite', 'test'])
    p.add_argument('--list_tests', action='store_true')
    p.add_argument('--list_tests_attr', action='store_true')


def _parse_6_12(p: argparse.ArgumentParser) -> None:
    p.add_argument('--raw_output', type=str, nargs='?', const='all',
                   default=None, choices=['all', 'kunit'])
    p.add_argument('--json', nargs='?', type=str, const='stdout', default=None,
                   metavar='FILE')


# kunit.py's subcommands and the option groups each takes (kunit.py main()).
_GROUPS = {'run': ('common', 'build', 'exec', 'parse'), 'config': ('common',),
           'build': ('common', 'build'), 'exec': ('common', 'exec', 'parse'),
           'parse': ('parse', 'file')}
COPY_6_12: dict[str, OptionGroup] = {
    'common': _common_6_12, 'build': _build_6_12, 'exec': _exec_6_12,
    'parse': _parse_6_12}


def _add_file(p: argparse.ArgumentParser) -> None:
    p.add_argument('file', type=str, nargs='?', metavar='input_file')


def parser(action: str, groups: dict[str, OptionGroup] | None = None
           ) -> argparse.ArgumentParser:
    """kunit.py's parser for one subcommand, from @groups (add_*_opts()
    functions by name; 6.12's, as copied above, by default).  It raises
    UsageError where kunit.py would print its usage and exit 2."""
    groups = {**(groups or COPY_6_12), 'file': _add_file}
    p = _Parser(prog=f'kunit.py {action}', add_help=False)
    for name in _GROUPS[action]:
        groups[name](p)
    return p


def tree_groups(tree: Path) -> dict[str, OptionGroup] | None:
    """The add_*_opts() functions of @tree's own kunit.py, or None if @tree
    has no kunit.py."""
    path = Path(tree) / 'tools/testing/kunit/kunit.py'
    if not path.is_file():
        return None
    sys.path.insert(0, str(path.parent))
    try:
        spec = importlib.util.spec_from_file_location('kbranch_tree_kunit', path)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as err:   # any failure of foreign code: report it
        raise ToolError(f'cannot read the options of {path}: {err}',
                        cli.EXIT_ENV) from None
    finally:
        sys.path.remove(str(path.parent))
    return {'common': module.add_common_opts, 'build': module.add_build_opts,
            'exec': module.add_exec_opts, 'parse': module.add_parse_opts}


def parse_passthrough(action: str, args: list[str],
                      groups: dict[str, OptionGroup] | None = None
                      ) -> argparse.Namespace:
    """Parses @args as kunit.py @action would (after its massage_argv());
    returns the namespace or raises UsageError."""
    massaged = [f'{a}={_PSEUDO_BOOL[a]}' if a in _PSEUDO_BOOL else a
                for a in args]
    return parser(action, groups).parse_args(massaged)


def option_table(p: argparse.ArgumentParser) -> list[tuple[Any, ...]]:
    """What a parser accepts, for comparing two of them: option strings,
    nargs, const, choices, type and whether it takes a value."""
    return sorted((tuple(a.option_strings) or (a.dest,), repr(a.nargs),
                   repr(a.const), repr(a.choices),
                   getattr(a.type, '__name__', repr(a.type)),
                   type(a).__name__)
                  for a in p._actions)


# --- running it -----------------------------------------------------------------

HEARTBEAT_SECONDS = 30
_STATS = '.kbranch-build.json'


def _objects(build: Path, since: float = 0.0) -> tuple[int, int]:
    """How many object files the build directory holds, and how many of
    them were written at or after @since (a time.time())."""
    total = newer = 0
    for root, _, files in os.walk(build):
        for f in files:
            if f.endswith('.o'):
                total += 1
                with contextlib.suppress(OSError):
                    newer += os.stat(os.path.join(root, f)).st_mtime >= since
    return total, newer


class Heartbeat:
    """Prints a line every HEARTBEAT_SECONDS while kunit.py builds: the
    object files written so far and in the build directory and, from the
    last complete build of that directory (kept in
    <build>/.kbranch-build.json), an estimate of what is left."""

    def __init__(self, build: Path | str, out: IO[str] | None = None,
                 period: float = HEARTBEAT_SECONDS) -> None:
        self.build, self.period = Path(build), period
        self.out = out or sys.stdout
        self.start = time.monotonic()
        self.wall_start = time.time()
        self.stop = threading.Event()
        self.thread: threading.Thread | None = None
        self.last: dict[str, Any] | None
        try:
            self.last = json.loads((self.build / _STATS).read_text())
        except (OSError, ValueError):
            self.last = None

    def begin(self) -> None:
        self.start, self.wall_start = time.monotonic(), time.time()
        self.thread = threading.Thread(target=self._beat, daemon=True)
        self.thread.start()

    def line(self, total: int, written: int, elapsed: float) -> str:
        text = (f'kunit: still building after {elapsed // 60:.0f} min '
                f'{elapsed % 60:02.0f} s: {written} object files written, '
                f'{total} in {self.build}')
        objects = (self.last or {}).get('objects', 0)
        if objects > total:
            text += f' ({objects} after its last complete build'
            if written > 0:
                eta = (objects - total) * elapsed / written
                text += f': about {eta / 60:.0f} min left at this rate'
            text += ')'
        return text

    def _beat(self) -> None:
        while not self.stop.wait(self.period):
            total, written = _objects(self.build, self.wall_start)
            print(self.line(total, written, time.monotonic() - self.start),
                  file=self.out, flush=True)

    def end(self, ok: bool) -> None:
        if self.thread is None:
            return
        self.stop.set()
        self.thread.join()
        self.thread = None
        if ok:
            stats = {'objects': _objects(self.build)[0],
                     'seconds': round(time.monotonic() - self.start)}
            with contextlib.suppress(OSError):
                (self.build / _STATS).write_text(json.dumps(stats) + '\n')


def _build_dir_of(args: list[str]) -> str | None:
    for a in args:
        if a.startswith('--build_dir='):
            return a.split('=', 1)[1]
    return None


def invoke(tree: Path, args: list[str], capture: bool = False,
           cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Runs kunit.py with args; returns the CompletedProcess (its stdout
    the output, with stderr, if @capture).  While kunit.py run or build
    builds, a heartbeat line appears every HEARTBEAT_SECONDS."""
    cmd = [sys.executable, '-u', str(kunit_py(tree)), *args]
    Path(paths.ccache_dir()).mkdir(parents=True, exist_ok=True)
    build = _build_dir_of(args)
    if not args or args[0] not in ('run', 'build') or build is None:
        return subprocess.run(cmd, cwd=cwd or tree, env=environment(), text=True,
                              stdout=subprocess.PIPE if capture else None,
                              stderr=subprocess.STDOUT if capture else None)
    beat = Heartbeat(build)
    kept = []
    proc = subprocess.Popen(cmd, cwd=cwd or tree, env=environment(), text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    building = args[0] == 'build'
    if building:
        beat.begin()
    assert proc.stdout is not None
    for line in proc.stdout:
        if capture:
            kept.append(line)
        else:
            sys.stdout.write(line)
            sys.stdout.flush()
        if 'Building KUnit Kernel' in line and beat.thread is None:
            beat.begin()
        elif 'Starting KUnit Kernel' in line:
            beat.end(True)
    code = proc.wait()
    beat.end(code == 0)
    return subprocess.CompletedProcess(cmd, code, ''.join(kept) if capture else None)


def list_tests(tree: Path, build: Path,
               timeout: int = DEFAULT_TIMEOUT) -> list[str]:
    """suite.test names of a built kernel, from kunit.py --list_tests."""
    proc = invoke(tree, ['exec', *exec_args(build), f'--timeout={timeout}',
                         '--list_tests'], capture=True)
    if proc.returncode != 0:
        last = (proc.stdout.strip().splitlines() or ['no output'])[-1]
        raise ToolError(f'kunit.py exec --list_tests failed '
                        f'(exit {proc.returncode}): {last}')
    tests = [line.strip() for line in proc.stdout.splitlines()
             if line.strip() and '.' in line and ' ' not in line.strip()]
    if not tests:
        raise ToolError(f'kunit.py exec --list_tests listed no test in '
                        f'{build}: is this a KUnit kernel with the '
                        f'series\' suites built in?')
    return tests


def suites_of(tests: list[str]) -> list[str]:
    suites = []
    for name in tests:
        suite = name.split('.', 1)[0]
        if suite not in suites:
            suites.append(suite)
    return suites


@dataclass
class Counts:
    """Test cases by result, counted over the leaves of kunit.py's JSON (a
    parameterised case counts once per parameter, as kunit.py counts), and
    a line per failure."""
    passed: int = 0
    failed: int = 0
    skipped: int = 0
    failures: list[str] = field(default_factory=list)

    def add(self, other: 'Counts') -> 'Counts':
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures
        return self

    @property
    def total(self) -> int:
        return self.passed + self.failed + self.skipped

    def line(self) -> str:
        return f'{self.passed} passed, {self.failed} failed, ' \
               f'{self.skipped} skipped'


@dataclass(frozen=True)
class JsonCase:
    """A leaf of kunit.py's JSON: the names of the groups it is in (the
    suite's first, then a parameterised case's; ('',) for a case kunit.py
    put at the top level, a suite that crashed before it printed any),
    its own name ('' for a case the kernel never reported) and its
    status (PASS, SKIP, FAIL, or kunit.py's other names of a failure)."""
    groups: tuple[str, ...]
    name: str
    status: str

    @property
    def group(self) -> str:
        return '.'.join(self.groups)


def json_cases(path: Path | str) -> list[JsonCase]:
    """The cases of a kunit.py --json file, in order."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise ToolError(f'cannot read kunit.py results {path}: {err}')
    if not isinstance(data, dict):
        raise ToolError(f'{path} is not kunit.py JSON')
    found: list[JsonCase] = []

    def walk(group: dict[str, Any], prefix: tuple[str, ...]) -> None:
        here = (*prefix, group.get('name', '?'))
        for case in group.get('test_cases', []):
            found.append(JsonCase(here, case.get('name') or '',
                                  str(case.get('status'))))
        for sub in group.get('sub_groups', []):
            walk(sub, here)

    for sub in data.get('sub_groups', []):
        walk(sub, ())
    for case in data.get('test_cases', []):
        # A suite that crashed before it printed any case is a leaf here.
        walk({'name': '', 'test_cases': [case]}, ())
    return found


def count_json(path: Path | str) -> Counts:
    """Counts the test cases in a kunit.py --json file."""
    counts = Counts()
    for case in json_cases(path):
        if case.status == 'PASS':
            counts.passed += 1
        elif case.status == 'SKIP':
            counts.skipped += 1
        else:
            counts.failed += 1
            # kunit.py names a case the kernel never reported ''
            counts.failures.append(
                f'{case.group}.{case.name}: {case.status}' if case.name else
                f'{case.group}: missing case ({case.status}: the kernel never '
                f'reported it)')
    return counts
