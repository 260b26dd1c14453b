"""Build step for the IR explorer's front end (the metadata is in pyproject.toml).

`build_py` makes sure jitviz/static/explorer.js is the bundle of labextension/'s sources:
when the hash recorded by the last build (jitviz/static/explorer.build.json) differs from
the sources, it runs `npm ci && npm run build` in labextension/. The built bundle is
committed, so a checkout, an sdist or a wheel installs without Node; without npm an
outdated bundle is used with a warning. JITVIZ_SKIP_FRONTEND_BUILD=1 skips the step.
"""
import importlib.util
import os
import pathlib
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py

HERE = pathlib.Path(__file__).resolve().parent
LABEXTENSION = HERE / "labextension"
STATIC = HERE / "jitviz" / "static"


def load_bundle_checks():
    path = HERE / "jitviz" / "explorer" / "bundle.py"
    spec = importlib.util.spec_from_file_location("_jitviz_explorer_bundle", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_front_end():
    if os.environ.get("JITVIZ_SKIP_FRONTEND_BUILD") == "1":
        return
    if not (LABEXTENSION / "package.json").is_file():
        return  # an sdist or a wheel build without the TypeScript sources: use the bundle
    if load_bundle_checks().bundle_is_current(LABEXTENSION, STATIC):
        return
    npm = shutil.which("npm")
    if npm is None:
        if (STATIC / "explorer.js").is_file():
            print("jitviz: labextension/ changed since jitviz/static/explorer.js was built, and "
                  "npm is not installed: using the existing bundle", file=sys.stderr)
            return
        raise RuntimeError("jitviz: jitviz/static/explorer.js is missing and npm is not "
                           "installed to build it from labextension/")
    print("jitviz: building the explorer front end (npm ci && npm run build)", file=sys.stderr)
    subprocess.run([npm, "ci", "--no-audit", "--no-fund"], cwd=LABEXTENSION, check=True)
    subprocess.run([npm, "run", "build"], cwd=LABEXTENSION, check=True)


class BuildPyWithFrontEnd(build_py):
    def run(self):
        build_front_end()
        super().run()


setup(cmdclass={"build_py": BuildPyWithFrontEnd})
