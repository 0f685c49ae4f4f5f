# SPDX-License-Identifier: GPL-2.0
"""The series in kernel-patches/: the pinned base (BASE), the series file,
the cover letter's names, and the reviewer notes a patch carries."""

import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

from cli import EXIT_USAGE, ToolError
from kgit import NOTES
from paths import PATCH_DIR, StrPath

# The series' cover letter, which tools/export writes next to the patches
# (from COVER_TEXT, kept by hand in kernel-patches/): a mail, not a patch.
COVER_LETTER = '0000-cover-letter.patch'
COVER_TEXT = 'cover-letter.txt'


@dataclass(frozen=True)
class Base:
    """kernel-patches/BASE: which package and kernel version the series
    needs (its PACKAGE, VERSION and DEBIAN_VERSION), and, optionally, the
    id of the upstream commit it is based on (UPSTREAM_COMMIT, 40 hex
    digits), which the cover letter names as its base-commit."""

    KEYS: ClassVar[tuple[str, ...]] = ('PACKAGE', 'VERSION', 'DEBIAN_VERSION')
    OPTIONAL: ClassVar[tuple[str, ...]] = ('UPSTREAM_COMMIT',)

    package: str
    version: str
    debian_version: str
    upstream_commit: str | None = None

    @classmethod
    def load(cls, path: StrPath | None = None) -> 'Base':
        path = Path(path) if path else PATCH_DIR / 'BASE'
        try:
            text = path.read_text()
        except OSError as err:
            raise ToolError(f'cannot read {path}: {err.strerror}', EXIT_USAGE)
        values: dict[str, str] = {}
        for num, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line or line.startswith('#'):
                continue
            key, sep, value = line.partition('=')
            if not sep or key not in cls.KEYS + cls.OPTIONAL or not value:
                raise ToolError(f'{path}:{num}: expected one of '
                                f'{", ".join(k + "=..." for k in cls.KEYS + cls.OPTIONAL)}, '
                                f'got {line!r}', EXIT_USAGE)
            if key in values:
                raise ToolError(f'{path}:{num}: {key} is given twice '
                                f'({values[key]!r}, then {value!r}): keep '
                                f'one', EXIT_USAGE)
            values[key] = value
        missing = [k for k in cls.KEYS if k not in values]
        if missing:
            raise ToolError(f'{path}: missing {", ".join(missing)}', EXIT_USAGE)
        if not re.fullmatch(r'\d+\.\d+\.\d+', values['VERSION']):
            raise ToolError(f'{path}: VERSION must look like 6.12.118, got '
                            f'{values["VERSION"]!r}', EXIT_USAGE)
        upstream = values.get('UPSTREAM_COMMIT')
        if upstream is not None and not re.fullmatch(r'[0-9a-f]{40}',
                                                     upstream):
            raise ToolError(f'{path}: UPSTREAM_COMMIT must be a full commit '
                            f'id (40 lowercase hex digits), got '
                            f'{upstream!r}', EXIT_USAGE)
        return cls(values['PACKAGE'], values['VERSION'],
                   values['DEBIAN_VERSION'], upstream)

    def tarball(self) -> Path:
        """RECLAIM_TARBALL, or the path Debian's package installs."""
        env = os.environ.get('RECLAIM_TARBALL')
        return Path(env) if env else Path('/usr/src') / f'{self.package}.tar.xz'

    def describe(self) -> str:
        return f'{self.package} {self.version} ({self.debian_version})'


def read_series(patch_dir: StrPath | None = None) -> list[Path]:
    """Returns the patch file names listed in series, in order.

    Every name must exist and every *.patch file must be listed: a patch that
    is on disk but not in series (or the reverse) is a mistake that would
    silently change what gets tested.  The cover letter (COVER_LETTER) is
    not a patch: never listed, never applied.
    """
    patch_dir = Path(patch_dir) if patch_dir else PATCH_DIR
    series = patch_dir / 'series'
    try:
        lines = series.read_text().splitlines()
    except OSError as err:
        raise ToolError(f'cannot read {series}: {err.strerror}', EXIT_USAGE)
    names: list[str] = []
    for num, line in enumerate(lines, 1):
        line = line.strip()
        if not line or line.startswith('#'):
            continue
        if '/' in line or not line.endswith('.patch') or line == COVER_LETTER:
            raise ToolError(f'{series}:{num}: {line!r} is not a patch file '
                            f'name in kernel-patches/', EXIT_USAGE)
        if not (patch_dir / line).is_file():
            raise ToolError(f'{series}:{num}: {line} does not exist',
                            EXIT_USAGE)
        if line in names:
            raise ToolError(f'{series}:{num}: {line} is listed twice',
                            EXIT_USAGE)
        names.append(line)
    unlisted = sorted(p.name for p in patch_dir.glob('*.patch')
                      if p.name not in names and p.name != COVER_LETTER)
    if unlisted:
        raise ToolError(f'{series} does not list {", ".join(unlisted)}; '
                        f'export the series again (tools/export) or delete '
                        f'the stray file', EXIT_USAGE)
    return [patch_dir / n for n in names]


def patch_notes(text: str) -> str:
    """The reviewer notes of a patch: the "Notes (kbranch):" block that
    git format-patch --notes writes below the --- line, de-indented; '' if
    there is none."""
    lines = text.splitlines()
    try:
        start = lines.index('---')
    except ValueError:
        return ''
    header = f'Notes ({NOTES}):'
    for i in range(start + 1, min(start + 3, len(lines))):
        if lines[i] == header:
            break
    else:
        return ''
    notes = []
    for line in lines[i + 1:]:
        if line.startswith('    '):
            notes.append(line[4:])
        elif line == '':
            notes.append('')
        else:
            break
    return '\n'.join(notes).strip('\n')
