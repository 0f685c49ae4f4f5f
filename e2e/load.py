# SPDX-License-Identifier: GPL-2.0
"""The load scenario: the NFS release wait's policies compared where not
waiting could hurt (e2e/init's load()).  Writers write over loopback NFS
to an ext4 export on the guest's virtio-blk disk (what is written can
leave memory), in a memory cgroup with a tight limit (memcg) or beside a
hog that leaves little memory free (global), and the OOM killer may kill
them: kills are a result counted per boot, not a failure.

What one boot says (load_facts()), what is checked of it (load_checks())
and the table over boots, one row per pressure and policy
(summarize_load(), table_load())."""

import re
import statistics
from dataclasses import dataclass, field
from typing import Any

import harness
from fs import _int, kv, pairs
from harness import Check, Console

PRESSURES = ('memcg', 'global')
# where nfsd runs: in the guest's network namespace (the mount is of
# 127.0.0.1) or in one of its own, over a veth pair
SERVERS = ('local', 'netns')
# none (6.12's: no wait) and bounded (the branch's default budget); the
# unbounded debug wait is not a policy a user runs
POLICIES = ('none', 'bounded')
# The guest: the pressure scenario's 384 MiB.  The disk image: twice what
# is written, and room for ext4's own blocks.
MEMORY_MB = 384


def disk_mb(mb: int) -> int:
    """The sparse disk image's size for a boot that writes @mb MiB."""
    return 2 * mb + 512


def psi_totals(text: str | None) -> dict[str, int]:
    """A memory.pressure or /proc/pressure/memory file on one line ("some
    avg10=0.00 avg60=0.00 avg300=0.00 total=N full avg10=... total=M") ->
    {'some': N, 'full': M} (microseconds stalled)."""
    out: dict[str, int] = {}
    kind = None
    for w in (text or '').split():
        if w in ('some', 'full'):
            kind = w
        elif kind and w.startswith('total='):
            n = _int(w[len('total='):])
            if n is not None:
                out[kind] = n
    return out


@dataclass
class LoadFacts:
    """One boot of the load scenario, as its console says."""
    server: str | None
    pressure: str | None
    policy: str | None
    seed: str | None
    outcome: str
    writers: int | None
    writers_ok: int | None
    writers_killed: int | None
    writers_failed: int | None
    write_seconds: float | None
    written_mb: float | None
    throughput_mb_s: float | None       # written_mb / write_seconds
    memory_events: dict[str, int]
    oom_kills: int | None               # /proc/vmstat's oom_kill, the run's
    memcg_pgscan: int | None
    memcg_pgsteal: int | None
    global_pgscan: int | None           # kswapd + direct, during the run
    allocstall: int | None
    refaults: int | None                # workingset_refault_*, the run's
    # seconds some / all of the writers' tasks stalled on memory (their
    # cgroup's memory.pressure; the guest's for global pressure)
    psi_some_s: float | None
    psi_full_s: float | None
    waits: int
    waits_timed_out: int
    waits_committed: int
    budget_spent: int
    data: str | None
    hung_task_reports: int
    lockdep_reports: int
    panic: bool
    oom_lines: int
    errors: list[str] = field(default_factory=list)


def _scan(counters: dict[str, int], keys: tuple[str, ...]) -> int:
    return sum(n for k, n in counters.items() if k in keys)


def load_facts(r: Console) -> LoadFacts:
    v = r.values
    params = kv(v.get('load_params'))
    writers = kv(v.get('writers'))
    events = pairs(v.get('memory_events'))
    written = _int(v.get('written_kb'))
    written_mb = written / 1024 if written is not None else None
    before, after = r.vmstat_before, r.vmstat_after
    both = bool(before and after)
    if params.get('pressure') == 'global':
        psi_a, psi_b = psi_totals(v.get('psi_after')), psi_totals(v.get('psi_before'))
        psi = {k: psi_a[k] - psi_b[k] for k in psi_a if k in psi_b}
    else:
        psi = psi_totals(v.get('memcg_psi'))
    waits = harness.real_waits(r)
    server = (v.get('server') or '').split()
    return LoadFacts(
        server=server[0] if server else None,
        pressure=params.get('pressure'), policy=r.policy,
        seed=params.get('seed'),
        outcome=harness.outcome(r).value,
        writers=_int(writers.get('total')),
        writers_ok=_int(writers.get('ok')),
        writers_killed=_int(writers.get('killed')),
        writers_failed=_int(writers.get('failed')),
        write_seconds=r.write_seconds,
        written_mb=written_mb,
        throughput_mb_s=(written_mb / r.write_seconds
                         if written_mb is not None and r.write_seconds
                         and r.result == 'completed' else None),
        memory_events={k: int(n) for k, n in events.items() if n.isdigit()},
        oom_kills=(after.get('oom_kill', 0) - before.get('oom_kill', 0)
                   if both else None),
        memcg_pgscan=r.memcg.get('pgscan'),
        memcg_pgsteal=r.memcg.get('pgsteal'),
        global_pgscan=(_scan(after, ('pgscan_kswapd', 'pgscan_direct'))
                       - _scan(before, ('pgscan_kswapd', 'pgscan_direct'))
                       if both else None),
        allocstall=harness._delta(r, 'allocstall_') if both else None,
        refaults=harness._delta(r, 'workingset_refault_') if both else None,
        psi_some_s=psi['some'] / 1e6 if 'some' in psi else None,
        psi_full_s=psi['full'] / 1e6 if 'full' in psi else None,
        waits=len(waits),
        waits_timed_out=sum(w.result == 'timed_out' for w in waits),
        waits_committed=sum(w.result == 'committed' for w in waits),
        budget_spent=harness.budget_spent(r),
        data=r.data,
        hung_task_reports=r.hung_task_reports,
        lockdep_reports=len(r.lockdep),
        panic=r.panic, oom_lines=r.oom, errors=r.errors)


def load_checks(policy: str, r: Console, kernel: str = 'branch') -> list[Check]:
    """What every boot of the load scenario must show.  OOM kills of
    writers are results, not failures; a hang, a panic, a kernel report
    or data read back wrong fails the boot."""
    f = load_facts(r)
    bound = harness.policy_bound(policy)
    base = kernel == harness.BASE_KERNEL
    checks: list[Check] = [
        (f'the guest ran the {kernel} kernel (E2E: kernel, and the '
         f'release wait\'s event {"absent" if base else "traced"})',
         r.values.get('kernel', 'branch') == kernel
         and (r.values.get('release_wait_event') == 'absent') == base,
         f'E2E: kernel {r.values.get("kernel")!r}, release_wait_event '
         f'{r.values.get("release_wait_event")!r}'),
        ('the boot completed: every writer ended (no hang, no panic)',
         harness.outcome(r) is harness.Outcome.COMPLETED,
         f'{f.outcome}: {r.errors}'),
        ('the writers started (E2E: writers line)', f.writers is not None,
         'no E2E: writers line'),
        ('no writer failed but by a kill (exit status 0 or 137)',
         f.writers_failed == 0, f'{f.writers_failed} failed: '
         f'{r.values.get("writers")}'),
        ("the finished writers' data read back as written",
         f.data in ('ok', 'none'), f'data {f.data}'),
        ('no hung-task report', r.hung_task_reports == 0,
         f'{r.hung_task_reports} reports'),
        ('no lockdep report', not r.lockdep,
         f'{harness.shown(r.lockdep)}'),
        ('no kernel report but the OOM killer\'s',
         not [x for x in r.reports if 'blocked for more than' not in x
              and not harness.LOCKDEP_RE.search(x)],
         f'{r.reports[:3]}'),
        ('every release wait event reached the console (no trace '
         'overrun)', *harness.trace_ok(r)),
    ]
    if f.pressure == 'memcg':
        checks.append(('memory cgroup reclaim scanned', bool(f.memcg_pgscan),
                       f'memory.stat pgscan {f.memcg_pgscan}'))
    else:
        checks.append(('kswapd or direct reclaim scanned',
                       bool(f.global_pgscan), f'pgscan delta {f.global_pgscan}'))
    if base or bound == 0:
        checks.append(('no release wait event (the base has no release wait)'
                       if base else 'no release wait (nfs.release_wait_local_ms=0)',
                       f.waits == 0, f'{f.waits} waits'))
    checks.append(harness.malformed_check(r))
    return checks


@dataclass
class LoadSummary:
    """A kernel, server, pressure and policy's boots: a row of the table."""
    kernel: str
    server: str
    pressure: str
    policy: str
    boots: int
    completed: int
    hung: int
    panics: int
    boots_with_oom_kill: int
    oom_kills: list[int | None]
    writers_killed: list[int | None]
    writers: int
    throughput_mb_s: list[float | None]
    psi_some_s: list[float | None]
    psi_full_s: list[float | None]
    memcg_pgsteal: list[int | None]
    allocstall: list[int | None]
    refaults: list[int | None]
    waits: list[int]
    waits_timed_out: list[int]
    hung_task_reports: int
    lockdep_reports: int
    data_ok: int
    seeds: list[str | None]


def summarize_load(server: str, pressure: str, policy: str,
                   runs: list[Console], kernel: str = 'branch') -> LoadSummary:
    facts = [load_facts(r) for r in runs]
    return LoadSummary(
        kernel=kernel, server=server, pressure=pressure, policy=policy, boots=len(runs),
        completed=sum(f.outcome == 'completed' for f in facts),
        hung=sum(f.outcome == 'hung' for f in facts),
        panics=sum(f.panic for f in facts),
        boots_with_oom_kill=sum(bool(f.oom_kills) for f in facts),
        oom_kills=[f.oom_kills for f in facts],
        writers_killed=[f.writers_killed for f in facts],
        writers=sum(f.writers or 0 for f in facts),
        throughput_mb_s=[f.throughput_mb_s for f in facts],
        psi_some_s=[f.psi_some_s for f in facts],
        psi_full_s=[f.psi_full_s for f in facts],
        memcg_pgsteal=[f.memcg_pgsteal for f in facts],
        allocstall=[f.allocstall for f in facts],
        refaults=[f.refaults for f in facts],
        waits=[f.waits for f in facts],
        waits_timed_out=[f.waits_timed_out for f in facts],
        hung_task_reports=sum(f.hung_task_reports for f in facts),
        lockdep_reports=sum(f.lockdep_reports for f in facts),
        data_ok=sum(f.data in ('ok', 'none') for f in facts),
        seeds=[f.seed for f in facts])


def spread(values: list[Any], spec: str = 'd') -> str:
    """"median (min-max)" of the values that are not None; "-" if none."""
    got = sorted(v for v in values if v is not None)
    if not got:
        return '-'
    med = statistics.median(got)
    if got[0] == got[-1]:
        return format(got[0], spec)
    return (f'{format(med, spec if spec != "d" else "g")} '
            f'({format(got[0], spec)}-{format(got[-1], spec)})')


def table_load(summaries: list[LoadSummary]) -> str:
    rows = ['| kernel | server | pressure | policy | boots | completed | hung | panics '
            '| boots with an OOM kill | OOM kills | writers killed '
            '| writers MB/s | memory stall s (some / full) '
            '| direct reclaims | refaults '
            '| release waits (timed out) | hung-task / lockdep reports '
            '| data ok |',
            '|' + '---|' * 18]
    for s in summaries:
        killed = [k for k in s.writers_killed if k is not None]
        rows.append(
            f'| {s.kernel} | {s.server} | {s.pressure} | {s.policy} | {s.boots} | {s.completed} '
            f'| {s.hung} | {s.panics} | {s.boots_with_oom_kill} '
            f'| {spread(s.oom_kills)} | {sum(killed)} of {s.writers} '
            f'| {spread(s.throughput_mb_s, ".2f")} '
            f'| {spread(s.psi_some_s, ".1f")} / {spread(s.psi_full_s, ".1f")} '
            f'| {spread(s.allocstall)} | {spread(s.refaults)} '
            f'| {spread(s.waits)} ({spread(s.waits_timed_out)}) '
            f'| {s.hung_task_reports} / {s.lockdep_reports} '
            f'| {s.data_ok}/{s.boots} |')
    return '\n'.join(rows) + '\n'


LOG_RE = re.compile(r'^(?P<pressure>\w+)\.(?P<policy>\w+)\.(?P<k>\d+)\.log$')
