# SPDX-License-Identifier: GPL-2.0
"""Running the kernel tree's kunit.py the way this branch does: x86_64 under
QEMU (TCG: kunit.py's x86_64 config never passes -enable-kvm), all cores,
a persistent build directory per configuration and ccache, all outside the
repository."""

import contextlib
import fcntl
import json
import os
import re
import subprocess
from pathlib import Path

import kbranch
from kbranch import ToolError

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


def console_reports(text):
    """The lines of @text that start a kernel report no suite announced."""
    expected, allowed, found = [], False, []
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


def kunit_py(tree):
    path = Path(tree) / 'tools/testing/kunit/kunit.py'
    if not path.is_file():
        raise ToolError(f'{path} not found: is {tree} a prepared kernel tree? '
                        f'(run tools/prepare)', kbranch.EXIT_ENV)
    return path


def kunitconfigs(variant='default'):
    """The kunitconfig fragments and the extra options of a configuration:
    the top-level .kunitconfig, plus, for any other variant, the lines of
    kunit/variants/<variant>.config.  Those go to kunit.py as --kconfig_add,
    which may override what .kunitconfig sets ("# CONFIG_X is not set")."""
    configs = [kbranch.REPO / '.kunitconfig']
    options = []
    if variant != 'default':
        extra = kbranch.REPO / 'kunit' / 'variants' / f'{variant}.config'
        if not extra.is_file():
            known = sorted(p.stem for p in
                           (kbranch.REPO / 'kunit' / 'variants').glob('*.config'))
            raise ToolError(f'unknown variant {variant!r}; known: default, '
                            f'{", ".join(known) or "(none)"}', kbranch.EXIT_USAGE)
        for line in extra.read_text().splitlines():
            line = line.strip()
            if line.startswith('CONFIG_') or \
                    (line.startswith('# CONFIG_') and line.endswith(' is not set')):
                options.append(line)
    return configs, options


def variants():
    return ['default'] + sorted(
        p.stem for p in (kbranch.REPO / 'kunit' / 'variants').glob('*.config'))


def environment():
    """ccache in front of gcc (Debian's masquerade directory), its cache
    outside the repository."""
    env = dict(os.environ)
    masq = '/usr/lib/ccache'
    if os.path.isdir(masq) and masq not in env.get('PATH', '').split(':'):
        env['PATH'] = masq + ':' + env.get('PATH', '')
    env.setdefault('CCACHE_DIR', str(kbranch.ccache_dir()))
    env.setdefault('CCACHE_MAXSIZE', '5G')
    # Compile lines differ only in the tree's path between trees.
    env.setdefault('CCACHE_BASEDIR', str(kbranch.tree_dir()))
    return env


def build_args(build, variant='default', jobs=None, kunitconfig=None):
    """Options of kunit.py run/build/config for one configuration: a variant
    of .kunitconfig, or another kunitconfig file altogether."""
    configs, options = ([kunitconfig], []) if kunitconfig else kunitconfigs(variant)
    return [f'--build_dir={build}', f'--arch={ARCH}',
            f'--jobs={jobs or os.cpu_count() or 1}',
            *(f'--kunitconfig={c}' for c in configs),
            *(f'--kconfig_add={o}' for o in options)]


def exec_args(build):
    """Options of kunit.py exec for an existing build."""
    return [f'--build_dir={build}', f'--arch={ARCH}',
            *(f'--kernel_args={a}' for a in KERNEL_ARGS)]


@contextlib.contextmanager
def build_lock(build, who):
    """Holds the build directory for one tool: two tools never build in (or
    boot from) one build directory at once.  Raises ToolError (exit 4) at
    once, naming the holder, if another tool has it."""
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
                            f'it to finish, or point RECLAIM_BUILD_DIR '
                            f'elsewhere', kbranch.EXIT_REFUSED) from None
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


def hold_build(build, who):
    """build_lock() for the rest of this process (a command-line tool)."""
    _HELD.enter_context(build_lock(build, who))


def invoke(tree, args, capture=False, cwd=None):
    """Runs kunit.py with args; returns the CompletedProcess."""
    cmd = ['python3', str(kunit_py(tree)), *args]
    Path(kbranch.ccache_dir()).mkdir(parents=True, exist_ok=True)
    return subprocess.run(cmd, cwd=cwd or tree, env=environment(), text=True,
                          stdout=subprocess.PIPE if capture else None,
                          stderr=subprocess.STDOUT if capture else None)


def list_tests(tree, build, timeout=DEFAULT_TIMEOUT):
    """suite.test names of a built kernel, from kunit.py --list_tests."""
    proc = invoke(tree, ['exec', *exec_args(build), f'--timeout={timeout}',
                         '--list_tests'], capture=True)
    if proc.returncode != 0:
        raise ToolError(f'kunit.py exec --list_tests failed '
                        f'(exit {proc.returncode}): '
                        f'{proc.stdout.strip().splitlines()[-1:]}')
    return [l.strip() for l in proc.stdout.splitlines()
            if l.strip() and '.' in l and ' ' not in l.strip()]


def suites_of(tests):
    suites = []
    for name in tests:
        suite = name.split('.', 1)[0]
        if suite not in suites:
            suites.append(suite)
    return suites


class Counts:
    """Test cases by result, counted over the leaves of kunit.py's JSON (a
    parameterised case counts once per parameter, as kunit.py counts)."""

    def __init__(self, passed=0, failed=0, skipped=0):
        self.passed, self.failed, self.skipped = passed, failed, skipped
        self.failures = []

    def add(self, other):
        self.passed += other.passed
        self.failed += other.failed
        self.skipped += other.skipped
        self.failures += other.failures
        return self

    @property
    def total(self):
        return self.passed + self.failed + self.skipped

    def line(self):
        return f'{self.passed} passed, {self.failed} failed, ' \
               f'{self.skipped} skipped'


def count_json(path):
    """Counts the test cases in a kunit.py --json file."""
    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as err:
        raise ToolError(f'cannot read kunit.py results {path}: {err}')
    counts = Counts()

    def walk(group, prefix):
        name = group.get('name', '?')
        here = f'{prefix}.{name}' if prefix else name
        for case in group.get('test_cases', []):
            status = case.get('status')
            if status == 'PASS':
                counts.passed += 1
            elif status == 'SKIP':
                counts.skipped += 1
            else:
                counts.failed += 1
                counts.failures.append(f'{here}.{case.get("name")}: {status}')
        for sub in group.get('sub_groups', []):
            walk(sub, here)

    if not isinstance(data, dict):
        raise ToolError(f'{path} is not kunit.py JSON')
    for sub in data.get('sub_groups', []):
        walk(sub, '')
    for case in data.get('test_cases', []):
        # A suite that crashed before it printed any case is a leaf here.
        walk({'name': '', 'test_cases': [case]}, '')
    return counts
