"""What the Python tests that start real cascade processes share: a failure
with a message, a probe with a deadline, and the processes of one run with
their logs in a work directory.

Imported by tests/console/console_test.py and tests/consul/python_consul_test.py
(each puts this folder on sys.path first).
"""

import os
import subprocess
import time

PATIENCE_S = 10  # a deadline only: passing runs never wait this long


class Failure(Exception):
    pass


def check(condition, message):
    if not condition:
        raise Failure(message)


def eventually(what, probe, patience=PATIENCE_S):
    """probe() until it returns something true; that value. Fails after `patience` s."""
    deadline = time.monotonic() + patience
    last = None
    while time.monotonic() < deadline:
        try:
            last = probe()
            if last:
                return last
        except Exception as e:  # a page still loading, a process still starting
            last = e
        time.sleep(0.02)
    raise Failure(f'{what}: not within {patience} s (last: {last!r})')


class Processes:
    """The processes of one run, each with NAME.out and NAME.err in `workdir`."""

    def __init__(self, workdir):
        self.workdir = workdir
        self.processes = []

    def spawn(self, name, argv):
        out = open(os.path.join(self.workdir, name + '.out'), 'w')
        err = open(os.path.join(self.workdir, name + '.err'), 'w')
        process = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=out, stderr=err)
        self.processes.append((name, process))
        return process

    def line_of(self, process, path, prefix):
        """The rest of the first line of `path` that starts with `prefix`, once it is there."""
        def probe():
            check(process.poll() is None, f'{path}: the process exited with {process.returncode}')
            if os.path.exists(path):
                for line in open(path).read().splitlines():
                    if line.startswith(prefix):
                        return line[len(prefix):]
            return None
        return eventually(f'a line "{prefix}..." in {path}', probe)

    def output_line(self, name, process, prefix):
        """line_of() on the process's standard output."""
        return self.line_of(process, os.path.join(self.workdir, name + '.out'), prefix)

    def stop(self):
        """Ends the processes, the last started first (agents before their hubs, so
        their deregistrations are acknowledged)."""
        for _, process in reversed(self.processes):
            if process.poll() is None:
                process.terminate()
            try:
                process.wait(5)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()

    def print_logs(self):
        for name, _ in self.processes:
            for suffix in ('.out', '.err'):
                text = open(os.path.join(self.workdir, name + suffix)).read()
                if text:
                    print(f'--- {name}{suffix}\n{text}')
