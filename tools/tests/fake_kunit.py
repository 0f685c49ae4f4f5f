#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A stand-in for tools/testing/kunit/kunit.py, for the tools' tests.

Suites: alpha passes two cases (one of them parameterised twice), beta
crashes the kernel, gamma leaves results kunit.py's JSON cannot be read
from, delta skips its only case, epsilon passes with a console the
file FAKE_KUNIT_CONSOLE names (only listed when that is set).  FAKE_KUNIT_BUILD=fail makes the build
fail.  Every call is appended to <build_dir>/calls."""

import json
import os
import sys

args = sys.argv[1:]
opts = dict(a[2:].split('=', 1) for a in args if a.startswith('--') and '=' in a)
flags = [a for a in args if a.startswith('--') and '=' not in a]
words = [a for a in args if not a.startswith('--')]
action = words[0]
build = opts.get('build_dir', '.')
os.makedirs(build, exist_ok=True)
with open(os.path.join(build, 'calls'), 'a') as f:
    f.write(' '.join(args) + '\n')

KTAP = 'KTAP version 1\n1..1\n    # Subtest: {0}\n    ok 1 case\nok 1 {0}\n'


def case(name, status):
    return {'name': name, 'status': status}


def group(name, cases=(), subs=()):
    return {'name': name, 'test_cases': list(cases), 'sub_groups': list(subs)}


if action == 'run':          # config + build + exec, here only exec
    action = 'exec'
    words = ['exec', words[1] if len(words) > 1 else 'alpha']
if action in ('build', 'config'):
    sys.exit(1 if os.environ.get('FAKE_KUNIT_BUILD') == 'fail' else 0)
if action == 'parse':
    with open(words[1]) as f:
        for line in f:
            if 'KTAP' in line or line.lstrip().startswith(('ok', 'not ok', '#', '1..')):
                sys.stdout.write(line)
    sys.exit(0)
if action == 'exec' and '--list_tests' in flags:
    print('[12:00:00] Starting KUnit Kernel (1/1)...')
    for name in ('alpha.one', 'alpha.two', 'beta.one', 'gamma.one', 'delta.one'):
        print(name)
    if os.environ.get('FAKE_KUNIT_CONSOLE'):
        print('epsilon.one')
    sys.exit(0)
if action == 'exec':
    suite = words[1]
    log = os.path.join(build, 'test.log')
    result = opts.get('json')
    if suite == 'alpha':
        open(log, 'w').write(KTAP.format(suite))
        data = group('KUnit Test Group', subs=[group('alpha', [case('one', 'PASS')], [
            group('two', [case('p1', 'PASS'), case('p2', 'PASS')])])])
    elif suite == 'delta':
        open(log, 'w').write(KTAP.format(suite))
        data = group('KUnit Test Group', subs=[group('delta', [case('one', 'SKIP')])])
    elif suite == 'epsilon':
        with open(os.environ['FAKE_KUNIT_CONSOLE']) as f:
            open(log, 'w').write(f.read())
        data = group('KUnit Test Group', subs=[group('epsilon', [case('one', 'PASS')])])
    elif suite == 'beta':
        open(log, 'w').write('KTAP version 1\n1..1\n[  1.0] Kernel panic - not syncing\n')
        print('[ERROR] Test: beta: missing expected subtest!')
        sys.exit(1)
    else:
        open(log, 'w').write('garbage\n')
        open(result, 'w').write('{not json')
        sys.exit(0)
    open(result, 'w').write(json.dumps(data))
    print(f'[12:00:01] {suite} done')
    sys.exit(0)
sys.exit(2)
