"""Is the built front end (jitviz/static/explorer.js) up to date with labextension/?

`labextension/build.mjs` writes `jitviz/static/explorer.build.json` with a SHA-256 of the
files the bundle is built from; `sources_hash` computes the same here, with the standard
library only (setup.py loads this file by path, before jitviz is importable).
"""
from __future__ import annotations

import hashlib
import json
import pathlib

ROOT_FILES = ("build.mjs", "package.json", "package-lock.json")


def source_files(labextension: pathlib.Path) -> list[str]:
    files = [name for name in ROOT_FILES if (labextension / name).is_file()]
    files += [p.relative_to(labextension).as_posix()
              for p in (labextension / "src").rglob("*") if p.is_file()]
    return sorted(files)


def sources_hash(labextension: pathlib.Path) -> str:
    digest = hashlib.sha256()
    for name in source_files(labextension):
        digest.update(name.encode() + b"\0")
        digest.update((labextension / name).read_bytes())
        digest.update(b"\0")
    return digest.hexdigest()


def recorded_hash(static: pathlib.Path) -> str | None:
    try:
        return json.loads((static / "explorer.build.json").read_text())["sources_sha256"]
    except (OSError, ValueError, KeyError):
        return None


def bundle_is_current(labextension: pathlib.Path, static: pathlib.Path) -> bool:
    """The bundle exists and was built from exactly the sources in `labextension`."""
    return (static / "explorer.js").is_file() and (static / "explorer.css").is_file() \
        and recorded_hash(static) == sources_hash(labextension)
