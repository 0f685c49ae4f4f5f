#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for tools/testing/kunit/kunit.py, for the tools' tests.

It accepts exactly the command line of 6.12's kunit.py (the copy in
tools/lib/kunitpy.py, which a test compares with the prepared tree's own):
anything else exits 2 with kunit.py's usage error, as kunit.py does.  Like
kunit.py it has add_common_opts() ... add_parse_opts(), for tools/kunit's
check of its arguments.  The tools' lib directory is named by the file
fake_lib_path next to it.

Suites: alpha passes two cases (one of them parameterised twice), beta
crashes the kernel, gamma leaves results kunit.py's JSON cannot be read
from, delta skips its only case ("needs CONFIG_DELTA"), epsilon passes
with a console the file FAKE_KUNIT_CONSOLE names (only listed when that
is set), zeta passes one case and crashes before the next (only listed
with FAKE_KUNIT_PARTIAL=1).
FAKE_KUNIT_BUILD=fail makes the build fail; FAKE_KUNIT_LIST=empty makes
--list_tests list nothing.  Every call but parse is appended to <build_dir>/calls."""

import json
import os
import sys
from pathlib import Path

sys.path.insert(0, (Path(__file__).parent / 'fake_lib_path').read_text().strip())
import kunitpy

add_common_opts = kunitpy.COPY_6_12['common']
add_build_opts = kunitpy.COPY_6_12['build']
add_exec_opts = kunitpy.COPY_6_12['exec']
add_parse_opts = kunitpy.COPY_6_12['parse']

KTAP = 'KTAP version 1\n1..1\n    # Subtest: {0}\n    ok 1 case\nok 1 {0}\n'


def case(name, status):
    return {'name': name, 'status': status}


def group(name, cases=(), subs=()):
    return {'name': name, 'test_cases': list(cases), 'sub_groups': list(subs)}


def main(args):
    if not args or args[0] not in kunitpy.ACTIONS:
        print('usage: kunit.py [-h] {run,config,build,exec,parse} ...',
              file=sys.stderr)
        return 2
    action = args[0]
    try:
        ns = kunitpy.parse_passthrough(action, args[1:])
    except kunitpy.UsageError as err:
        print(f'usage: kunit.py {action} ...\nkunit.py {action}: error: {err}',
              file=sys.stderr)
        return 2
    build = getattr(ns, 'build_dir', None)     # parse has none
    if build:
        os.makedirs(build, exist_ok=True)
        with open(os.path.join(build, 'calls'), 'a') as f:
            f.write(' '.join(args) + '\n')

    if action in ('run', 'build', 'config'):
        print('[12:00:00] Configuring KUnit Kernel ...')
        if action != 'config':
            print('[12:00:00] Building KUnit Kernel ...')
        if os.environ.get('FAKE_KUNIT_BUILD') == 'fail':
            return 1
        if action != 'run':
            return 0
    if action == 'parse':
        with open(ns.file) as f:
            for line in f:
                if 'KTAP' in line or line.lstrip().startswith(('ok', 'not ok', '#', '1..')):
                    sys.stdout.write(line)
        return 0
    print('[12:00:00] Starting KUnit Kernel (1/1)...')
    if ns.list_tests:
        if os.environ.get('FAKE_KUNIT_LIST') == 'empty':
            return 0
        for name in ('alpha.one', 'alpha.two', 'beta.one', 'gamma.one', 'delta.one'):
            print(name)
        if os.environ.get('FAKE_KUNIT_CONSOLE'):
            print('epsilon.one')
        if os.environ.get('FAKE_KUNIT_PARTIAL'):
            print('zeta.one')
            print('zeta.two')
        return 0
    suite = ns.filter_glob or 'alpha'
    log = os.path.join(build, 'test.log')
    result = None if ns.json in (None, 'stdout') else ns.json
    if suite == 'alpha':
        open(log, 'w').write(KTAP.format(suite))
        data = group('KUnit Test Group', subs=[group('alpha', [case('one', 'PASS')], [
            group('two', [case('p1', 'PASS'), case('p2', 'PASS')])])])
    elif suite == 'delta':
        open(log, 'w').write('KTAP version 1\n1..1\n    # Subtest: delta\n'
                             '    ok 1 one # SKIP needs CONFIG_DELTA\nok 1 delta\n')
        data = group('KUnit Test Group', subs=[group('delta', [case('one', 'SKIP')])])
    elif suite == 'epsilon':
        with open(os.environ['FAKE_KUNIT_CONSOLE']) as f:
            open(log, 'w').write(f.read())
        data = group('KUnit Test Group', subs=[group('epsilon', [case('one', 'PASS')])])
    elif suite == 'zeta':
        # as kunit.py reports a suite whose kernel died after its first case
        open(log, 'w').write('KTAP version 1\n1..1\n    # Subtest: zeta\n'
                             '    1..2\n    ok 1 one\n[  1.0] Kernel panic - not syncing\n')
        print('[ERROR] Test: zeta: missing expected subtest!')
        data = group('KUnit Test Group', subs=[
            group('zeta', [case('one', 'PASS'), case('', 'ERROR')])])
        if result:
            open(result, 'w').write(json.dumps(data))
        return 1
    elif suite == 'beta':
        open(log, 'w').write('KTAP version 1\n1..1\n[  1.0] Kernel panic - not syncing\n')
        print('[ERROR] Test: beta: missing expected subtest!')
        return 1
    else:
        open(log, 'w').write('garbage\n')
        if result:
            open(result, 'w').write('{not json')
        return 0
    if result:
        open(result, 'w').write(json.dumps(data))
    print(f'[12:00:01] {suite} done')
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
