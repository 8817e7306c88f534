"""Finds the CPython interpreters the Python tests run under: pyenv builds of each minor version
and Debian's /usr/bin/python3 (libpython linked statically into the executable)."""
import glob
import os
import re

MINORS = ["3.9", "3.10", "3.11", "3.12", "3.13", "3.14"]
SYSTEM = "/usr/bin/python3"
# ctest's SKIP_RETURN_CODE for interpreters that are not installed.
SKIP = 77


def default_pyenv_root():
    return os.environ.get("PYENV_ROOT", os.path.expanduser("~/.pyenv"))


def _version_key(label):
    return [int(n) for n in re.findall(r"\d+", label)]


def find(which, pyenv_root):
    """(label, executable) pairs for `which` ("3.12" or "system"); pyenv may hold several builds
    of one minor version, e.g. 3.13.0 and the free-threaded 3.13.0t."""
    if which == "system":
        return [("system", SYSTEM)] if os.access(SYSTEM, os.X_OK) else []
    found = set()
    pattern = os.path.join(pyenv_root, "versions", which + ".*", "bin", "python" + which + "*")
    for exe in glob.glob(pattern):
        if re.fullmatch(r"python\d+\.\d+t?", os.path.basename(exe)) and os.access(exe, os.X_OK):
            found.add((os.path.basename(os.path.dirname(os.path.dirname(exe))), exe))
    return sorted(found, key=lambda item: _version_key(item[0]))
