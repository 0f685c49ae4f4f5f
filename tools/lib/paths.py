# SPDX-License-Identifier: GPL-2.0
"""Where things are: the repository, its kernel-patches/, and the cache,
kernel tree, build and results directories (each overridable from the
environment)."""

import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
# A path as the tools take one: a Path, or a str from the environment.
StrPath = str | os.PathLike[str]
PATCH_DIR = REPO / 'kernel-patches'


def cache_dir() -> Path:
    """RECLAIM_CACHE, or ${XDG_CACHE_HOME:-~/.cache}/reclaim-kunit."""
    env = os.environ.get('RECLAIM_CACHE')
    if env:
        return Path(env)
    xdg = os.environ.get('XDG_CACHE_HOME') or str(Path.home() / '.cache')
    return Path(xdg) / 'reclaim-kunit'


def tree_dir() -> Path:
    """RECLAIM_TREE, or <cache>/linux."""
    env = os.environ.get('RECLAIM_TREE')
    return Path(env) if env else cache_dir() / 'linux'


def build_dir(variant: str = 'default') -> Path:
    """RECLAIM_BUILD_DIR/<variant>, or <cache>/build/<variant>."""
    env = os.environ.get('RECLAIM_BUILD_DIR')
    root = Path(env) if env else cache_dir() / 'build'
    return root / variant


def ccache_dir() -> Path:
    env = os.environ.get('CCACHE_DIR')
    return Path(env) if env else cache_dir() / 'ccache'


def results_dir() -> Path:
    """RECLAIM_RESULTS, or results/ in the repository (ignored by git)."""
    env = os.environ.get('RECLAIM_RESULTS')
    return Path(env) if env else REPO / 'results'
