"""A command that leaves descendants behind: one in its process group, one detached with
``setsid`` after a double fork; it says so in ``probe/ready`` and then waits to be stopped."""

from __future__ import annotations

import os
import subprocess
import sys
import time

SLEEPER = "import time; time.sleep(60)"


def main() -> None:
    marker = sys.argv[1]
    subprocess.Popen([sys.executable, "-c", SLEEPER, marker])
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execv(sys.executable, [sys.executable, "-c", SLEEPER, marker])
        os._exit(0)
    os.wait()
    with open("probe/ready", "w") as handle:
        handle.write("ready")
    time.sleep(60)


if __name__ == "__main__":
    main()
