# SPDX-License-Identifier: GPL-2.0
"""The fs scenario: lockdep under a workload written elsewhere (stress-ng's
filesystem class) on ext4, XFS and btrfs, and on NFS (ext4 exported by
nfsd and mounted over 127.0.0.1: the client's and nfsd's lockdep maps
under that workload), under memory cgroup or global pressure, with the
planted reclaim lock inversion as its positive control (e2e/init's
fs_scenario(); CONFIG_TEST_RECLAIM_INVERSION).

What one boot says (fs_facts()), what is checked of it (fs_checks()) and
the table over boots (summarize_fs(), table_fs()).  The isolation
throttle's waits during the workload (mm_vmscan_throttled, reason
isolated), the LRU lists' sizes before it and the highest
nr_isolated_* read during it are measurements, not checks; a waits count
whose trace buffer overran is a lower bound (">=N")."""

import re
from dataclasses import dataclass, field
from typing import Any

import harness
from harness import Check, Console, LockdepReport

FILESYSTEMS = ('ext4', 'xfs', 'btrfs', 'nfs')
# pnfs (tools/e2e run --scenario pnfs, not in a full run's default): ext4
# exported with nfsd's flexfiles layout, the data server nfsd itself over
# NFSv3, written by dd writers (fsync, O_DIRECT, close, files kept open)
PNFS = 'pnfs'
FS_CHOICES = FILESYSTEMS + (PNFS,)
# The pNFS committer's cycle: commit_mutex held over the commit data's
# allocation, which may reclaim (commit_mutex -> fs_reclaim), and reclaim
# releasing a folio awaiting a COMMIT, which takes commit_mutex
# (fs_reclaim -> commit_mutex).  The kernels without a NOFS scope over that
# allocation, where lockdep may report the cycle; the others must never
# record the first edge.
COMMIT_MUTEX = '&nfsi->commit_mutex'
PNFS_UNFIXED = ('base', 'no-pnfs-nofs')
# fs=nfs: the lock:lock_acquire counts of e2e/init's NFS_MAP_EVENTS
NFS_MAP_EVENTS = ('commit_wait', 'write_wait')
PRESSURES = ('memcg', 'global')
# The guest: 768 MiB (stress-ng's forty-odd stressors and lockdep's tables
# beside a hog), an 8 GiB sparse disk image per boot (with 1 GiB,
# stress-ng's fallocate and hdd stressors filled it and a dozen others
# failed with ENOSPC).
MEMORY_MB = 768
DISK_MB = 8192
CONTROL_LOCK = 'planted_reclaim_lock'
# A boot's extra time, by filesystem: on NFS, stress-ng's cleanup after its
# timeout took over 240 s under TCG, and e2e/init gives it 900
EXTRA_SECONDS = {'nfs': 660}

# Which kernels' lockdep must report the control after which pressure.  The
# series' kernels (the fs_reclaim map, which it takes in memory cgroup
# reclaim too, with or without the RECLAIM_FS state) after either; 6.12's
# fs_reclaim alone (no-memcg-map) only after reclaim that holds the map,
# which 6.12's memory cgroup reclaim does not take: there the control's
# absence is the gap measured, not a failure.
# Every other kernel of the series reports it after either.
CONTROL_EXPECTED: dict[str, dict[str, bool | None]] = {
    'no-memcg-map': {'memcg': None, 'global': True},
}


def kv(text: str | None) -> dict[str, str]:
    """"a=1 b=x" -> {'a': '1', 'b': 'x'}."""
    return dict(w.split('=', 1) for w in (text or '').split() if '=' in w)


def pairs(text: str | None) -> dict[str, str]:
    """"key value key value" (a cgroup file on one line) -> {key: value}."""
    words = (text or '').split()
    return dict(zip(words[::2], words[1::2]))


def _int(v: str | None) -> int | None:
    try:
        return int(v) if v is not None else None
    except ValueError:
        return None


def _counts(text: str | None) -> tuple[int | None, list[str]]:
    """"N name name ..." (in_reclaim_added, held_over_added)."""
    words = (text or '').split()
    return (_int(words[0]) if words else None), words[1:]


def is_control(report: LockdepReport) -> bool:
    return CONTROL_LOCK in report.classes


@dataclass
class FsFacts:
    """One boot of the fs scenario, as its console says."""
    fs: str | None
    pressure: str | None
    outcome: str
    workload_rc: int | None
    workload_seconds: str | None
    stress: str | None
    memory_events: dict[str, int]
    memcg_pgscan: int | None
    memcg_pgsteal: int | None
    global_pgscan: int | None         # kswapd + direct, during the workload
    lockdep_before: dict[str, int]
    lockdep_after: dict[str, int]
    in_reclaim_added: int | None
    in_reclaim_names: list[str]
    held_over_added: int | None
    held_over_names: list[str]
    reclaim_fs_in_added: int | None     # classes the state marked in reclaim
    reclaim_fs_in_names: list[str]
    control_scans: int | None
    first_report: dict[str, Any] | None
    first_report_is_control: bool | None
    reports: int
    hung_task_reports: int
    oom_lines: int
    lru: str | None                     # mglru or classic (fs_params)
    guest_mb: int | None                # the guest's memory (fs_params)
    # /proc/vmstat's nr_{in,}active_{anon,file} once the hog is in
    lru_sizes: dict[str, int]
    # the isolation throttle's waits during the workload, and the events
    # its trace buffer lost (overrun > 0: the count is a lower bound)
    throttled_isolated: int | None
    throttled_overrun: int | None
    # the highest nr_isolated_file / _anon of /proc/vmstat during it
    isolated_file_max: int | None
    isolated_anon_max: int | None
    # fs=nfs: nfsd_commit / nfsd_write taken during the workload
    # (NFS_MAP_EVENTS: the client's waits for write, nfsd's service as a
    # recursive reader), and the classes that came to lead to each map
    nfs_maps: dict[str, int] = field(default_factory=dict)
    commit_over_added: int | None = None
    commit_over_names: list[str] = field(default_factory=list)
    write_over_added: int | None = None
    write_over_names: list[str] = field(default_factory=list)
    mounted: str | None = None
    # fs=pnfs: the mount's LAYOUTGETs, the data server's NFSv3 WRITEs and
    # COMMITs during the workload, the layout type; the commit_mutex
    # cycle's two edges in /proc/lockdep_chains after it (over: held over
    # an allocation that may reclaim; in: taken in reclaim)
    pnfs: dict[str, str] = field(default_factory=dict)
    commit_mutex_edges: dict[str, int] = field(default_factory=dict)
    allocstall: int | None = None       # direct reclaims, during the workload
    errors: list[str] = field(default_factory=list)


def _throttled(n: int | None, overrun: int | None) -> str:
    """The isolation throttle's waits of one boot as the table shows
    them: N, ">=N" when the trace buffer overran, "-" without a count."""
    if n is None:
        return '-'
    return f'>={n}' if overrun else str(n)


def throttled_text(f: FsFacts) -> str:
    return _throttled(f.throttled_isolated, f.throttled_overrun)


def _lockdep(text: str | None) -> dict[str, int]:
    return {k: int(v) for k, v in kv(text).items() if v.isdigit()}


def fs_facts(r: Console) -> FsFacts:
    v = r.values
    params = kv(v.get('fs_params'))
    stat, events = pairs(v.get('memory_stat')), pairs(v.get('memory_events'))

    def scan(counters: dict[str, int]) -> int:
        return sum(n for k, n in counters.items()
                   if k in ('pgscan_kswapd', 'pgscan_direct'))
    global_scan = (scan(r.vmstat_after) - scan(r.vmstat_before)
                   if r.vmstat_after and r.vmstat_before else None)
    in_n, in_names = _counts(v.get('in_reclaim_added'))
    over_n, over_names = _counts(v.get('held_over_added'))
    rin_n, rin_names = _counts(v.get('reclaim_fs_in_added'))
    cover_n, cover_names = _counts(v.get('nfsd_commit_over_added'))
    wover_n, wover_names = _counts(v.get('nfsd_write_over_added'))
    first = r.lockdep[0] if r.lockdep else None
    workload = kv(v.get('workload'))
    seen = kv(v.get('isolated_seen'))
    # the lru line ("classic 0x0000") for a console whose fs_params lacks it
    lru = params.get('lru') or (v.get('lru') or '').split(' ')[0] or None
    return FsFacts(
        fs=params.get('fs'), pressure=params.get('pressure'),
        outcome=harness.outcome(r).value,
        workload_rc=_int(workload.get('rc')),
        workload_seconds=workload.get('seconds'),
        stress=v.get('stress'),
        memory_events={k: int(n) for k, n in events.items() if n.isdigit()},
        memcg_pgscan=_int(stat.get('pgscan')),
        memcg_pgsteal=_int(stat.get('pgsteal')),
        global_pgscan=global_scan,
        lockdep_before=_lockdep(v.get('lockdep_before')),
        lockdep_after=_lockdep(v.get('lockdep_after')),
        in_reclaim_added=in_n, in_reclaim_names=in_names,
        held_over_added=over_n, held_over_names=over_names,
        reclaim_fs_in_added=rin_n, reclaim_fs_in_names=rin_names,
        control_scans=_int(kv(v.get('control')).get('scans')),
        first_report=({'kind': first.kind, 'classes': first.classes,
                       'reclaim_fs': first.reclaim_fs,
                       'fs_reclaim': 'fs_reclaim' in first.classes}
                      if first else None),
        first_report_is_control=is_control(first) if first else None,
        reports=len(r.lockdep), hung_task_reports=r.hung_task_reports,
        oom_lines=r.oom, lru=lru, guest_mb=_int(params.get('guest_mb')),
        lru_sizes={k: int(n) for k, n in kv(v.get('lru_sizes')).items()
                   if n.isdigit()},
        throttled_isolated=r.throttled_isolated,
        throttled_overrun=_int(v.get('throttled_overrun')),
        isolated_file_max=_int(seen.get('file_max')),
        isolated_anon_max=_int(seen.get('anon_max')),
        nfs_maps={k: int(n) for k, n in kv(v.get('nfs_maps')).items()
                  if n.isdigit()},
        commit_over_added=cover_n, commit_over_names=cover_names,
        write_over_added=wover_n, write_over_names=wover_names,
        mounted=v.get('fs_mounted'),
        pnfs=kv(v.get('pnfs')),
        commit_mutex_edges={k: int(n) for k, n in
                            kv(v.get('commit_mutex_edges')).items() if n.isdigit()},
        allocstall=(harness._delta(r, 'allocstall_')
                    if r.vmstat_after and r.vmstat_before else None),
        errors=r.errors)


def is_commit_mutex_cycle(report: LockdepReport) -> bool:
    """The pNFS committer's cycle: a circular dependency between fs_reclaim
    and commit_mutex, commit_mutex taken again (two inodes' mutexes are
    one class), or, with the RFC RECLAIM_FS state, commit_mutex's
    inconsistent {RECLAIM_FS-ON-W} -> {IN-RECLAIM_FS-W} usage, which it
    reports first (fs_reclaim is among the held locks it names)."""
    return COMMIT_MUTEX in report.classes and (
        'fs_reclaim' in report.classes or 'recursive' in report.kind)


def fs_checks(kernel: str, r: Console) -> list[Check]:
    """What every boot of the fs scenario must show.  A lockdep report of
    the workload fails the boot: it is a finding, to be triaged (README)."""
    f = fs_facts(r)
    workload_reports = [x for x in r.lockdep if not is_control(x)]
    control_reports = [x for x in r.lockdep if is_control(x)]
    if f.fs == PNFS and kernel in PNFS_UNFIXED:
        # the cycle is what this kernel is booted to show
        workload_reports = [x for x in workload_reports
                            if not is_commit_mutex_cycle(x)]
    checks: list[Check] = [
        ('the boot completed (no hang, no panic)',
         harness.outcome(r) is harness.Outcome.COMPLETED,
         f'{f.outcome}: {r.errors}'),
        ('the workload ran to its end (stress-ng exited)',
         f.workload_rc is not None, 'no E2E: workload line'),
        ('no hung-task report', r.hung_task_reports == 0,
         f'{r.hung_task_reports} reports'),
        ('no lockdep report of the workload (a report is a finding: '
         'triage it)', not workload_reports,
         f'{harness.shown(workload_reports)}'),
    ]
    if f.fs == 'nfs':
        checks += nfs_checks(f)
    if f.fs == PNFS:
        checks += pnfs_checks(kernel, f, r)
    if f.pressure == 'memcg':
        checks.append(('memory cgroup reclaim scanned during the workload',
                       bool(f.memcg_pgscan), f'memory.stat pgscan {f.memcg_pgscan}'))
    else:
        checks.append(('kswapd or direct reclaim scanned during the workload',
                       bool(f.global_pgscan), f'pgscan delta {f.global_pgscan}'))
    if kernel in harness.BASE_KERNELS:
        # the planted control is a patch of the series
        checks.append(harness.malformed_check(r))
        return checks
    expected = CONTROL_EXPECTED.get(
        kernel, dict.fromkeys(PRESSURES, True)).get(f.pressure or '')
    checks.append(('the control reached reclaim (its shrinker took the lock)',
                   bool(f.control_scans), f'scans {f.control_scans}'))
    if r.lockdep and not control_reports:
        pass    # lockdep stopped at the workload's report: no control then
    elif expected is True:
        checks.append((f'lockdep reported the planted control ({CONTROL_LOCK})',
                       bool(control_reports), 'no report names it'))
    elif expected is False:
        checks.append(('lockdep did not report the planted control',
                       not control_reports, f'{harness.shown(control_reports)}'))
    checks.append(harness.malformed_check(r))
    return checks


def mount_check(f: FsFacts) -> Check:
    """fs=nfs and fs=pnfs: the workload ran on the loopback mount."""
    return ('the workload\'s mount is NFS over 127.0.0.1',
            (f.mounted or '').startswith('127.0.0.1:/ /mnt/fs nfs4 '),
            f'fs_mounted {f.mounted!r}')


def pnfs_checks(kernel: str, f: FsFacts, r: Console) -> list[Check]:
    """fs=pnfs: the workload went through pNFS (layouts granted, the data
    server written and committed: a quiet boot is not one where pNFS never
    ran), and lockdep's view of commit_mutex.  Without a NOFS scope over
    the commit data's allocation (PNFS_UNFIXED) commit_mutex must come to
    lead to fs_reclaim, the planted half of the cycle (the positive
    control of the others' check), and a report, if any, is the cycle;
    with one it never does."""
    p = f.pnfs
    edges = f.commit_mutex_edges
    over = edges.get('over')
    cycle = [x for x in r.lockdep if is_commit_mutex_cycle(x)]
    checks: list[Check] = [
        mount_check(f),
        ('the client was granted flexfiles layouts (LAYOUTGET)',
         p.get('layout') == 'LAYOUT_FLEX_FILES' and _int(p.get('layoutget')) not in (None, 0),
         f'pnfs {p}'),
        ('the data server was written and committed (NFSv3 WRITE, COMMIT)',
         bool(_int(p.get('ds_write'))) and bool(_int(p.get('ds_commit'))),
         f'pnfs {p}'),
        ('lockdep\'s graph was read after the workload', over is not None,
         f'commit_mutex_edges {edges}'),
    ]
    if kernel in PNFS_UNFIXED:
        checks.append((f'{COMMIT_MUTEX} was held over an allocation that may '
                       f'reclaim (-> fs_reclaim), or lockdep reported the cycle',
                       bool(over) or bool(cycle), f'commit_mutex_edges {edges}'))
    else:
        checks.append((f'{COMMIT_MUTEX} was never held over an allocation that '
                       f'may reclaim into the filesystem (no -> fs_reclaim)',
                       over == 0 and not cycle,
                       f'commit_mutex_edges {edges}, {harness.shown(cycle)}'))
    return checks


def nfs_checks(f: FsFacts) -> list[Check]:
    """fs=nfs: the workload ran on the loopback mount, and went through
    what the series annotates: the client showed lockdep both kinds of
    wait for nfsd, and lockdep was on to the end (else "no report" would
    say nothing about them)."""
    m = f.nfs_maps
    return [
        mount_check(f),
        ('the lock:lock_acquire counts of both maps were read',
         all(k in m for k in NFS_MAP_EVENTS), f'nfs_maps {m}'),
        ('the client showed lockdep its COMMIT waits for nfsd (nfsd_commit '
         'taken for write)', m.get('commit_wait', 0) > 0, f'nfs_maps {m}'),
        ('the client showed lockdep its writeback waits for nfsd (nfsd_write '
         'taken for write)', m.get('write_wait', 0) > 0, f'nfs_maps {m}'),
        # lock:lock_acquire fires before lockdep's debug_locks check: nfsd's
        # counts grow after a report turned lockdep off
        ('lockdep was still on after the workload (debug_locks 1)',
         f.lockdep_after.get('debug_locks') == 1,
         f'lockdep_after {f.lockdep_after}'),
    ]


@dataclass
class FsSummary:
    kernel: str
    fs: str
    pressure: str
    boots: int
    completed: int
    workload_reports: list[dict[str, Any]]
    control_reported: int
    control_reached: int
    oom_kills: list[int]
    memcg_pgscan: list[int | None]
    global_pgscan: list[int | None]
    in_reclaim_added: list[int | None]
    held_over_added: list[int | None]
    reclaim_fs_safe_added: list[int | None]
    # lockdep's graph grown by the workload: direct dependencies, chains
    deps_added: list[int | None]
    chains_added: list[int | None]
    # every class the state marked in reclaim during a workload, any boot
    reclaim_fs_in_names: list[str]
    # the isolation throttle, per boot: the LRU, the guest's MiB, the LRU
    # lists' sizes before the workload, its waits during it (">=N": the
    # trace buffer overran) and the highest nr_isolated_* read
    lru: list[str | None]
    guest_mb: list[int | None]
    lru_sizes: list[dict[str, int]]
    throttled_isolated: list[int | None]
    throttled_overrun: list[int | None]
    isolated_file_max: list[int | None]
    isolated_anon_max: list[int | None]
    # fs=nfs, per boot: NFS_MAP_EVENTS' counts, classes added before each map
    nfs_maps: list[dict[str, int]] = field(default_factory=list)
    commit_over_added: list[int | None] = field(default_factory=list)
    write_over_added: list[int | None] = field(default_factory=list)
    # every class that came to lead to nfsd_commit / nfsd_write, any boot
    over_names: list[str] = field(default_factory=list)
    # fs=pnfs, per boot: how it ended, FsFacts' pnfs, commit_mutex_edges
    # and allocstall
    outcomes: list[str] = field(default_factory=list)
    pnfs: list[dict[str, str]] = field(default_factory=list)
    commit_mutex_edges: list[dict[str, int]] = field(default_factory=list)
    allocstall: list[int | None] = field(default_factory=list)


def summarize_fs(kernel: str, fs: str, pressure: str,
                 runs: list[Console]) -> FsSummary:
    facts = [fs_facts(r) for r in runs]

    def added(f: FsFacts, key: str) -> int | None:
        a, b = f.lockdep_after.get(key), f.lockdep_before.get(key)
        return a - b if a is not None and b is not None else None
    return FsSummary(
        kernel=kernel, fs=fs, pressure=pressure, boots=len(runs),
        completed=sum(f.outcome == 'completed' for f in facts),
        workload_reports=[{'boot': k, 'kind': x.kind, 'classes': x.classes}
                          for k, r in enumerate(runs) for x in r.lockdep
                          if not is_control(x)],
        control_reported=sum(any(is_control(x) for x in r.lockdep) for r in runs),
        control_reached=sum(bool(f.control_scans) for f in facts),
        oom_kills=[f.memory_events.get('oom_kill', 0) for f in facts],
        memcg_pgscan=[f.memcg_pgscan for f in facts],
        global_pgscan=[f.global_pgscan for f in facts],
        in_reclaim_added=[f.in_reclaim_added for f in facts],
        held_over_added=[f.held_over_added for f in facts],
        reclaim_fs_safe_added=[added(f, 'safe') for f in facts],
        deps_added=[added(f, 'deps') for f in facts],
        chains_added=[added(f, 'chains') for f in facts],
        reclaim_fs_in_names=sorted({n for f in facts for n in f.reclaim_fs_in_names}),
        lru=[f.lru for f in facts], guest_mb=[f.guest_mb for f in facts],
        lru_sizes=[f.lru_sizes for f in facts],
        throttled_isolated=[f.throttled_isolated for f in facts],
        throttled_overrun=[f.throttled_overrun for f in facts],
        isolated_file_max=[f.isolated_file_max for f in facts],
        isolated_anon_max=[f.isolated_anon_max for f in facts],
        nfs_maps=[f.nfs_maps for f in facts],
        commit_over_added=[f.commit_over_added for f in facts],
        write_over_added=[f.write_over_added for f in facts],
        over_names=sorted({n for f in facts
                           for n in f.commit_over_names + f.write_over_names}),
        outcomes=[f.outcome for f in facts], pnfs=[f.pnfs for f in facts],
        commit_mutex_edges=[f.commit_mutex_edges for f in facts],
        allocstall=[f.allocstall for f in facts])


def _span(values: list[int | None]) -> str:
    got = [v for v in values if v is not None]
    if not got:
        return '-'
    return str(got[0]) if min(got) == max(got) else f'{min(got)}-{max(got)}'


def _each(values: list[Any]) -> str:
    """One value per boot: "1, 2, 3" ("-" for a boot without it)."""
    return ', '.join('-' if v is None else str(v) for v in values) or '-'


def _names(values: list[str | None]) -> str:
    """The distinct values, in their order ("-" for none known)."""
    got = list(dict.fromkeys(v for v in values if v))
    return ', '.join(got) or '-'


def table_fs(summaries: list[FsSummary]) -> str:
    rows = ['| kernel | fs | pressure | boots | completed | workload reports '
            '| control reported / reached | fs_reclaim: in-reclaim classes '
            'added | held-over classes added | RECLAIM_FS in-reclaim added '
            '| pgscan (memcg / global) | OOM kills '
            '| lockdep direct deps / chains added | LRU / guest MiB '
            '| isolation waits per boot | nr_isolated_file / _anon max per boot |',
            '|' + '---|' * 16]
    for s in summaries:
        reports = '; '.join(f'{x["kind"]}: {", ".join(x["classes"][:4])}'
                            for x in s.workload_reports) or '0'
        waits = [_throttled(n, o)
                 for n, o in zip(s.throttled_isolated, s.throttled_overrun)]
        rows.append(
            f'| {s.kernel} | {s.fs} | {s.pressure} | {s.boots} | {s.completed} '
            f'| {reports} | {s.control_reported} / {s.control_reached} '
            f'| {_span(s.in_reclaim_added)} | {_span(s.held_over_added)} '
            f'| {_span(s.reclaim_fs_safe_added)} '
            f'| {_span(s.memcg_pgscan)} / {_span(s.global_pgscan)} '
            f'| {_span(list(s.oom_kills))} '
            f'| {_span(s.deps_added)} / {_span(s.chains_added)} '
            f'| {_names(s.lru)} / {_span(s.guest_mb)} '
            f'| {_each(waits)} '
            f'| {_each(s.isolated_file_max)} / {_each(s.isolated_anon_max)} |')
    nfs = [s for s in summaries if s.fs == 'nfs']
    pnfs = [s for s in summaries if s.fs == PNFS]
    return ('\n'.join(rows) + '\n' + (table_nfs_maps(nfs) if nfs else '')
            + (table_pnfs(pnfs) if pnfs else ''))


def table_pnfs(summaries: list[FsSummary]) -> str:
    """The fs=pnfs rows (after the main table, a blank line between): per
    boot, how it ended, the layouts granted, the data server's WRITEs and
    COMMITs, the direct reclaims, the commit_mutex cycle's edges
    (held over reclaim / taken in it), and the reports by kind."""
    rows = ['', '| kernel | pressure | boots | outcome per boot | LAYOUTGETs '
            '| DS WRITEs / COMMITs | direct reclaims (allocstall) '
            '| commit_mutex -> fs_reclaim / fs_reclaim -> commit_mutex, per boot '
            '| workload reports |', '|' + '---|' * 9]
    for s in summaries:
        def span(key: str) -> str:
            return _span([_int(p.get(key)) for p in s.pnfs])
        edges = ', '.join(f'{e.get("over", "-")}/{e.get("in", "-")}'
                          for e in s.commit_mutex_edges) or '-'
        kinds: dict[str, int] = {}
        for x in s.workload_reports:
            kinds[x['kind']] = kinds.get(x['kind'], 0) + 1
        reports = '; '.join(f'{n} x {k}' for k, n in kinds.items()) or '0'
        rows.append(
            f'| {s.kernel} | {s.pressure} | {s.boots} | {_each(s.outcomes)} '
            f'| {span("layoutget")} | {span("ds_write")} / {span("ds_commit")} '
            f'| {_span(s.allocstall)} | {edges} | {reports} |')
    return '\n'.join(rows) + '\n'


def table_nfs_maps(summaries: list[FsSummary]) -> str:
    """The fs=nfs rows' lockdep maps (after the main table, a blank line
    between): how often the client showed lockdep a wait for nfsd during
    the workload, per boot's range, and the classes that came to lead to
    the maps."""
    rows = ['', '| kernel | pressure | boots | client waits shown: '
            'nfsd_commit / nfsd_write '
            '| classes added before nfsd_commit / nfsd_write | those classes |',
            '|' + '---|' * 6]
    for s in summaries:
        def span(key: str) -> str:
            return _span([m.get(key) for m in s.nfs_maps])
        rows.append(
            f'| {s.kernel} | {s.pressure} | {s.boots} '
            f'| {span("commit_wait")} / {span("write_wait")} '
            f'| {_span(s.commit_over_added)} / {_span(s.write_over_added)} '
            f'| {", ".join(s.over_names) or "-"} |')
    return '\n'.join(rows) + '\n'


LOG_RE = re.compile(r'^(?P<fs>\w+)\.(?P<pressure>\w+)\.(?P<k>\d+)\.log$')
