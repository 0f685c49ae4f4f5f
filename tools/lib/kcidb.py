# SPDX-License-Identifier: GPL-2.0
"""Results as KCIDB data, so that a KernelCI dashboard could take every CI
job's results: the Linux kernel CI reporting database's I/O schema,
version 4.0 (KCIDB_VERSION).  A job's file, kcidb.json in its results
directory, holds

  checkouts  the source tested: the base (kernel-patches/BASE) and the
             series' patches applied, one per tree commit (id
             <origin>:<commit>, so that every job's checkout of one commit
             is the same object)
  builds     one configuration built (id <origin>:<run>:<job>)
  tests      what ran on it: a KUnit case, a suite's console verdict, a
             mutant; its KTAP, console and kunit.py's JSON as output files

<origin> is RECLAIM_KCIDB_ORIGIN (default `reclaim`), <run> is
RECLAIM_RUN_ID (a CI pipeline's id; default: the UTC time the tool
started).  A file is named by its URL: RECLAIM_RESULTS_URL (where CI
publishes the working directory's files) followed by its path in the
working directory, or, without it, its file:// URI.

The counts (tally()) are those of the leaves of the checkout -> build ->
test tree: a test by its status (PASS, DONE passed; FAIL, ERROR failed;
SKIP, or a waived test, skipped), a build that no test names by its
`valid` (true passed, false failed: a build that failed, or a bisect
prefix), a checkout that no build names the same way.

kcidb-io, KCIDB's own library with its schema validation, is on PyPI,
which this project's machines do not reach: problems() is a checker of
the tools' own, written from KCIDB's documented v4.0 schema.  It checks
every property the schema knows and nothing else: the top level (version
{major 4, minor 0}, checkouts, builds, tests, no other key), each
object's required properties (id and origin; a build's checkout_id, a
test's build_id), no property the schema does not define, every
property's type, the patterns of ids (<origin>:...), origins
([a-z0-9_]+), git_commit_hash (40 hex digits), patchset_hash (64 or
none), git_repository_url (https:// or git://), architecture and test
path ([.a-zA-Z0-9_-]*), the test status (FAIL, ERROR, PASS, DONE, SKIP),
log_excerpt's 16384 characters, resources ({name without /, url}), and
the formats of URLs (an absolute URI), e-mail addresses and times (RFC
3339).  references() checks what the schema leaves to the database and
the tools promise of their own files: ids unique, and every checkout_id
and build_id naming an object of the same file.  When kcidb-io is
installed, validate() also runs its validation (kcidb_io.schema.V4_0)."""

import functools
import hashlib
import importlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any
from urllib.parse import quote

import cli
import series
from cli import ToolError

KCIDB_VERSION = {'major': 4, 'minor': 0}
ARCH = 'x86_64'
LISTS = ('checkouts', 'builds', 'tests')
STATUSES = ('FAIL', 'ERROR', 'PASS', 'DONE', 'SKIP')
PASSED, FAILED = ('PASS', 'DONE'), ('FAIL', 'ERROR')
LOG_EXCERPT_MAX = 16384
# A job's KCIDB data, in its results directory.
FILE = 'kcidb.json'

ORIGIN_RE = re.compile(r'[a-z0-9_]+')
ID_RE = re.compile(r'[a-z0-9_]+:.*')
SHA1_RE = re.compile(r'[0-9a-f]{40}')
PATCHSET_RE = re.compile(r'|[0-9a-f]{64}')
GIT_URL_RE = re.compile(r'(https|git)://.*')
ARCH_RE = re.compile(r'[a-z0-9_]*')
PATH_RE = re.compile(r'[.a-zA-Z0-9_-]*')
RESOURCE_NAME_RE = re.compile(r'[^/]+')
# "format": "uri" (an absolute URI: a scheme, no spaces), "email",
# "date-time" (RFC 3339)
URI_RE = re.compile(r'[A-Za-z][A-Za-z0-9+.-]*:[^\s]*')
EMAIL_RE = re.compile(r'[^@\s]+@[^@\s]+')
DATETIME_RE = re.compile(r'\d{4}-\d\d-\d\d[Tt]\d\d:\d\d:\d\d(\.\d+)?'
                         r'([Zz]|[+-]\d\d:\d\d)')

# A property's check: its value -> what is wrong with it, or None.
Check = Callable[[Any], str | None]


def _string(pattern: re.Pattern[str] | None = None, what: str = '',
            max_len: int | None = None) -> Check:
    def check(value: Any) -> str | None:
        if not isinstance(value, str):
            return f'{value!r} is not a string'
        if pattern is not None and not pattern.fullmatch(value):
            return f'{value!r} is not {what or pattern.pattern}'
        if max_len is not None and len(value) > max_len:
            return f'{len(value)} characters, more than {max_len}'
        return None
    return check


def _boolean(value: Any) -> str | None:
    return None if isinstance(value, bool) else f'{value!r} is not a boolean'


def _number(value: Any) -> str | None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool)
    return None if ok else f'{value!r} is not a number'


def _object(value: Any) -> str | None:
    return None if isinstance(value, dict) else f'{value!r} is not an object'


def _strings(value: Any) -> str | None:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        return f'{value!r} is not a list of strings'
    return None


_uri = _string(URI_RE, 'an absolute URI')


def _resources(value: Any) -> str | None:
    if not isinstance(value, list):
        return f'{value!r} is not a list of resources'
    for i, item in enumerate(value):
        if not isinstance(item, dict):
            return f'[{i}]: {item!r} is not a resource ({{name, url}})'
        extra = sorted(set(item) - {'name', 'url'})
        missing = [k for k in ('name', 'url') if k not in item]
        if extra or missing:
            return f'[{i}]: a resource has name and url only ' \
                   f'(missing {missing}, unknown {extra})'
        why = _string(RESOURCE_NAME_RE, 'a file name without /')(item['name']) \
            or _uri(item['url'])
        if why:
            return f'[{i}]: {why}'
    return None


def _environment(value: Any) -> str | None:
    if not isinstance(value, dict):
        return f'{value!r} is not an object'
    extra = sorted(set(value) - {'comment', 'misc'})
    if extra:
        return f'unknown properties {extra} (comment and misc only)'
    return (_string()(value['comment']) if 'comment' in value else None) or \
        (_object(value['misc']) if 'misc' in value else None)


def _status(value: Any) -> str | None:
    return None if value in STATUSES else \
        f'{value!r} is not one of {", ".join(STATUSES)}'


_id = _string(ID_RE, 'an id "<origin>:..." (origin: [a-z0-9_]+)')
_text = _string()
_time = _string(DATETIME_RE, 'an RFC 3339 date-time')
_excerpt = _string(max_len=LOG_EXCERPT_MAX)

# The v4.0 schema's objects: their properties, and the required ones.
SCHEMA: dict[str, tuple[dict[str, Check], tuple[str, ...]]] = {
    'checkouts': ({
        'id': _id, 'origin': _string(ORIGIN_RE),
        'tree_name': _text,
        'git_repository_url': _string(GIT_URL_RE, 'an https:// or git:// URL'),
        'git_commit_hash': _string(SHA1_RE, 'a full commit hash'),
        'git_commit_name': _text, 'git_repository_branch': _text,
        'patchset_files': _resources,
        'patchset_hash': _string(PATCHSET_RE, 'a sha256 hash or empty'),
        'message_id': _string(EMAIL_RE, 'an e-mail address'),
        'comment': _text, 'start_time': _time, 'contacts': _strings,
        'log_url': _uri, 'log_excerpt': _excerpt, 'valid': _boolean,
        'misc': _object}, ('id', 'origin')),
    'builds': ({
        'checkout_id': _id, 'id': _id, 'origin': _string(ORIGIN_RE),
        'comment': _text, 'start_time': _time, 'duration': _number,
        'architecture': _string(ARCH_RE, 'an architecture ([a-z0-9_]*)'),
        'command': _text, 'compiler': _text, 'input_files': _resources,
        'output_files': _resources, 'config_name': _text, 'config_url': _uri,
        'log_url': _uri, 'log_excerpt': _excerpt, 'valid': _boolean,
        'misc': _object}, ('checkout_id', 'id', 'origin')),
    'tests': ({
        'build_id': _id, 'id': _id, 'origin': _string(ORIGIN_RE),
        'environment': _environment,
        'path': _string(PATH_RE, 'a test path ([.a-zA-Z0-9_-]*)'),
        'comment': _text, 'log_url': _uri, 'log_excerpt': _excerpt,
        'status': _status, 'waived': _boolean, 'start_time': _time,
        'duration': _number, 'output_files': _resources, 'misc': _object},
        ('build_id', 'id', 'origin')),
}


def problems(data: Any) -> list[str]:
    """What in @data the KCIDB v4.0 schema does not allow, one message a
    problem, each naming where (builds[2].valid: ...); [] if none."""
    if not isinstance(data, dict):
        return [f'the data is not an object: {type(data).__name__}']
    found = [f'{key}: not a property of KCIDB v4.0 data (version, '
             f'{", ".join(LISTS)})' for key in data
             if key != 'version' and key not in LISTS]
    version = data.get('version')
    if version is None:
        found.append('version: missing (required)')
    elif not isinstance(version, dict) or set(version) - {'major', 'minor'} or \
            version.get('major') != 4 or type(version.get('major')) is not int or \
            version.get('minor', 0) != 0 or type(version.get('minor', 0)) is not int:
        found.append(f'version: {version!r} is not {{"major": 4, "minor": 0}} '
                     f'(KCIDB v4.0)')
    for key in LISTS:
        if key not in data:
            continue
        items = data[key]
        if not isinstance(items, list):
            found.append(f'{key}: {items!r} is not a list')
            continue
        props, required = SCHEMA[key]
        for i, item in enumerate(items):
            where = f'{key}[{i}]'
            if not isinstance(item, dict):
                found.append(f'{where}: {item!r} is not an object')
                continue
            found += [f'{where}.{name}: missing (required)'
                      for name in required if name not in item]
            for name, value in item.items():
                check = props.get(name)
                why = f'not a property of a KCIDB v4.0 {key[:-1]}' \
                    if check is None else check(value)
                if why:
                    found.append(f'{where}.{name}: {why}')
    return found


def references(data: dict[str, Any]) -> list[str]:
    """What the tools promise of their own files beyond the schema (the
    database accepts a test before its build): ids unique, and every
    checkout_id and build_id naming an object of the same file.  @data
    must be schema-valid (problems() found nothing)."""
    found = []
    ids: dict[str, set[str]] = {}
    for key in LISTS:
        ids[key] = set()
        for i, item in enumerate(data.get(key, [])):
            if item['id'] in ids[key]:
                found.append(f'{key}[{i}].id: {item["id"]!r} is given twice')
            ids[key].add(item['id'])
    for key, ref, parent in (('builds', 'checkout_id', 'checkouts'),
                             ('tests', 'build_id', 'builds')):
        for i, item in enumerate(data.get(key, [])):
            if item[ref] not in ids[parent]:
                found.append(f'{key}[{i}].{ref}: {item[ref]!r} names no '
                             f'{parent[:-1]} of this file')
    return found


def kcidb_io_schema() -> Any:
    """kcidb-io's kcidb_io.schema module, or None if it is not installed."""
    try:
        return importlib.import_module('kcidb_io.schema')
    except ImportError:
        return None


def kcidb_io_problems(data: Any) -> list[str] | None:
    """kcidb-io's own validation of @data against KCIDB v4.0
    (kcidb_io.schema.V4_0.validate), or None if kcidb-io is not
    installed."""
    schema = kcidb_io_schema()
    if schema is None:
        return None
    try:
        schema.V4_0.validate(data)
    except Exception as err:    # jsonschema's ValidationError, or any
        said = str(err).splitlines()
        return [f'kcidb-io: {said[0] if said else repr(err)}']
    return []


def validate(data: Any) -> list[str]:
    """Every problem problems(), references() and, if installed,
    kcidb-io's validation find in @data."""
    found = problems(data)
    if not found:
        found = references(data)
    external = kcidb_io_problems(data)
    return found + (external or [])


def tally(data: dict[str, Any]) -> tuple[int, int, int]:
    """(passed, failed, skipped) over the leaves of valid KCIDB data (see
    the module's docstring)."""
    passed = failed = skipped = 0
    tests = data.get('tests', [])
    builds = data.get('builds', [])
    for test in tests:
        status = test.get('status')
        if test.get('waived') or status == 'SKIP':
            skipped += 1
        elif status in PASSED:
            passed += 1
        else:                   # FAIL, ERROR, or no status given
            failed += 1
    tested = {t['build_id'] for t in tests}
    built = {b['checkout_id'] for b in builds}
    leaves = [b for b in builds if b['id'] not in tested] + \
        [c for c in data.get('checkouts', []) if c['id'] not in built]
    for leaf in leaves:
        if 'valid' in leaf:
            passed += leaf['valid']
            failed += not leaf['valid']
    return passed, failed, skipped


def load(path: Path) -> dict[str, Any]:
    """A job's KCIDB file, read and checked (validate()); a file that is
    missing, is not JSON or is not valid KCIDB v4.0 data raises
    ToolError (exit 2) saying so."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        raise ToolError(f'{path}: no such file: the job wrote no result '
                        f'(it stopped before its end, or its results were '
                        f'not kept)', cli.EXIT_USAGE) from None
    except OSError as err:
        raise ToolError(f'{path}: cannot read it: {err.strerror}',
                        cli.EXIT_USAGE) from None
    try:
        data = json.loads(text)
    except ValueError as err:
        raise ToolError(f'{path}: not JSON ({err}): a garbled result',
                        cli.EXIT_USAGE) from None
    found = validate(data)
    if found:
        more = f' (and {len(found) - 5} more)' if len(found) > 5 else ''
        raise ToolError(f'{path}: not valid KCIDB v4.0 data: '
                        f'{"; ".join(found[:5])}{more}', cli.EXIT_USAGE)
    return data


def union(datas: Iterable[dict[str, Any]]) -> dict[str, Any]:
    """One KCIDB data set of several jobs': each object once (the same
    checkout from several jobs is one); an id given twice with different
    contents raises ToolError (exit 2)."""
    out: dict[str, Any] = {'version': dict(KCIDB_VERSION),
                           **{key: [] for key in LISTS}}
    seen: dict[tuple[str, str], Any] = {}
    for data in datas:
        for key in LISTS:
            for item in data.get(key, []):
                before = seen.get((key, item['id']))
                if before is None:
                    seen[(key, item['id'])] = item
                    out[key].append(item)
                elif before != item:
                    raise ToolError(f'{key[:-1]} {item["id"]} is reported '
                                    f'twice, differently: two jobs with one '
                                    f'name, or one job merged twice',
                                    cli.EXIT_USAGE)
    return out


def write(path: Path, data: dict[str, Any]) -> Path:
    """Writes @data as @path (whole or not at all), after checking it: a
    tool that made data KCIDB would refuse is a bug, and says so."""
    found = validate(data)
    if found:
        raise ToolError(f'the KCIDB data for {path} is not valid (a bug of '
                        f'the tools): {"; ".join(found[:5])}')
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.{os.getpid()}')
    tmp.write_text(json.dumps(data, indent=1) + '\n')
    os.replace(tmp, path)
    return path


# --- making the objects -----------------------------------------------------------

def origin() -> str:
    """RECLAIM_KCIDB_ORIGIN, or `reclaim`: the CI system's name in KCIDB."""
    name = os.environ.get('RECLAIM_KCIDB_ORIGIN') or 'reclaim'
    if not ORIGIN_RE.fullmatch(name):
        raise ToolError(f'RECLAIM_KCIDB_ORIGIN={name!r}: a KCIDB origin is '
                        f'[a-z0-9_]+', cli.EXIT_USAGE)
    return name


@functools.cache
def run_id() -> str:
    """RECLAIM_RUN_ID (a CI pipeline's id), or the UTC time this process
    first asked: names this run's builds and tests."""
    return os.environ.get('RECLAIM_RUN_ID') or \
        time.strftime('%Y%m%dT%H%M%SZ', time.gmtime())


def timestamp(seconds: float) -> str:
    """A time.time() as KCIDB's date-time."""
    return datetime.fromtimestamp(seconds, timezone.utc).isoformat(timespec='seconds')


def path_part(name: str) -> str:
    """One part of a test path: what KCIDB does not allow ([^a-zA-Z0-9_-],
    the dot too, which separates parts) as _."""
    return re.sub(r'[^a-zA-Z0-9_-]', '_', name) or '_'


def url(results: Path, name: str) -> str:
    """The URL of the file @name of the results directory @results: with
    RECLAIM_RESULTS_URL (where CI publishes the files of the working
    directory: GitLab's $CI_JOB_URL/artifacts/raw), that URL followed by
    the file's path in the working directory; else its file:// URI."""
    path = (results / name).absolute()
    base = os.environ.get('RECLAIM_RESULTS_URL')
    if base and path.is_relative_to(Path.cwd()):
        return f'{base.rstrip("/")}/{quote(str(path.relative_to(Path.cwd())))}'
    return path.as_uri()


def resources(results: Path, names: Iterable[str]) -> list[dict[str, str]]:
    """The files of @names that @results holds, as KCIDB resources."""
    return [{'name': n, 'url': url(results, n)} for n in names
            if (results / n).is_file()]


def patchset_hash(patches: list[Path]) -> str:
    """KCIDB's patchset hash: the sha256 of the patches' sha256 hashes,
    each on a line; '' for none."""
    if not patches:
        return ''
    lines = ''.join(hashlib.sha256(p.read_bytes()).hexdigest() + '\n'
                    for p in patches)
    return hashlib.sha256(lines.encode()).hexdigest()


def checkout(commit: str, patches: list[Path], base_commit: str | None,
             valid: bool = True, log_excerpt: str = '',
             ident: str | None = None) -> dict[str, Any]:
    """The checkout of the tree commit @commit: the base (tree name, its
    commit @base_commit if known) and @patches applied on it.  Every
    job's checkout of one commit is the same object (no time in it)."""
    base = series.Base.load()
    data: dict[str, Any] = {
        'id': ident or f'{origin()}:{commit}', 'origin': origin(),
        'tree_name': base.package, 'git_commit_name': base.describe(),
        'patchset_hash': patchset_hash(patches),
        'comment': f'{base.describe()} and {len(patches)} patch'
                   f'{"" if len(patches) == 1 else "es"} of kernel-patches/',
        'valid': valid,
        'misc': {'commit': commit, 'patches': [p.name for p in patches],
                 **({'upstream_commit': base.upstream_commit}
                    if base.upstream_commit else {})}}
    if base_commit:
        data['git_commit_hash'] = base_commit
    if log_excerpt:
        data['log_excerpt'] = log_excerpt[-LOG_EXCERPT_MAX:]
    return data


def build(job: str, checkout_id: str, **fields: Any) -> dict[str, Any]:
    """A build of this run (id <origin>:<run>:<job>) of @checkout_id."""
    return {'id': f'{origin()}:{run_id()}:{job}', 'origin': origin(),
            'checkout_id': checkout_id, 'architecture': ARCH, **fields}


def test(build_id: str, key: str, path: str, status: str,
         **fields: Any) -> dict[str, Any]:
    """A test of the build @build_id (id <build id>:<key>)."""
    return {'id': f'{build_id}:{key}', 'origin': origin(),
            'build_id': build_id, 'path': path, 'status': status, **fields}


def dataset(checkouts: list[dict[str, Any]], builds: list[dict[str, Any]],
            tests: list[dict[str, Any]]) -> dict[str, Any]:
    return {'version': dict(KCIDB_VERSION), 'checkouts': checkouts,
            'builds': builds, 'tests': tests}


def excerpt(text: str) -> str:
    """The end of @text that fits a log_excerpt."""
    return text[-LOG_EXCERPT_MAX:]
