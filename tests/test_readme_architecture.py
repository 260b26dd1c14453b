"""README's "Architecture" example adds a primitive with its definition and one rule per
table; it runs here, in a child process (its primitive must not join this session's registry,
which other tests check for completeness), on the CPU backend."""
import os
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).parent.parent


def test_the_readme_example_adds_a_primitive_end_to_end(tmp_path):
    readme = (ROOT / "README.md").read_text()
    section = readme.split("## Architecture: adding a primitive")[1].split("\n## ")[0]
    (code,) = re.findall(r"```python\n(.*?)```", section, re.S)
    assert "register_shared(softsign_p" in code  # one rule for both Numba backends
    script = tmp_path / "example.py"
    script.write_text(code + "\nprint('example ran')\n")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "JITVIZ_CACHE_DIR": str(tmp_path / "cache")}
    proc = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                          env=env, timeout=300)
    assert proc.returncode == 0 and "example ran" in proc.stdout, proc.stderr[-3000:]
