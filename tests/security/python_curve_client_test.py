#!/usr/bin/python3
"""A Curve client that no one on this project wrote: Debian's python3-zmq.

Starts a real cascade-hub with a key pair and an authorised-keys file (made
here with zmq.curve_keypair, in the file format cascadectl keygen writes),
then sends a StatusRequest over CurveZMQ:
  - with an authorised key, the reply is a StatusReply whose security is "curve";
  - with a key the hub does not know, nothing comes back within the timeout.

Usage: python_curve_client_test.py PATH/TO/cascade-hub
Exit codes: 0 passed, 1 failed, 77 skipped (no python3-zmq with Curve here).
"""

import os
import subprocess
import sys
import tempfile
import time

SKIP = 77
try:
    import zmq
except ImportError:
    print('SKIP: /usr/bin/python3 cannot import zmq (install python3-zmq)')
    sys.exit(SKIP)
try:
    import msgpack
except ImportError:
    msgpack = None

STATUS_REQUEST = 7  # schemas/protocol-v1.md, section 3.7: [version 1, type 7, request_id]
STATUS_REPLY = 8
REPLY_TIMEOUT_MS = 3000
REFUSED_WAIT_MS = 1000


def status_request(request_id):
    if msgpack is not None:
        return msgpack.packb([1, STATUS_REQUEST, request_id])
    return bytes([0x93, 0x01, STATUS_REQUEST, request_id])  # fixarray(3), positive fixints


def write_key_file(path, text, mode):
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, 'w') as f:
        f.write(text)


def start_hub(hub_binary, workdir, hub_secret, authorised):
    key_file = os.path.join(workdir, 'hub.key')
    write_key_file(key_file, '# the hub\n' + hub_secret.decode() + '\n', 0o600)
    keys_file = os.path.join(workdir, 'authorized_keys')
    with open(keys_file, 'w') as f:
        f.write('# one authorised reader\n' + authorised.decode() + ' python-reader reader\n')
    data = os.path.join(workdir, 'data')
    log = open(os.path.join(workdir, 'hub.log'), 'w')
    hub = subprocess.Popen([hub_binary, '--id', 'py-hub', '--listen', 'tcp://127.0.0.1:*',
                            '--data', data, '--probe-held', 'off', '--secret-key', key_file,
                            '--authorized-keys', keys_file], stdout=log, stderr=log)
    endpoint_file = os.path.join(data, 'hub.endpoint')
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        if hub.poll() is not None:
            raise RuntimeError(f'cascade-hub exited with {hub.returncode}')
        if os.path.exists(endpoint_file):
            text = open(endpoint_file).read()
            if text.endswith('\n'):
                return hub, text.strip()
        time.sleep(0.02)
    hub.kill()
    raise RuntimeError('cascade-hub wrote no endpoint within 10 s')


def ask_status(context, endpoint, server_public, own_public, own_secret, wait_ms):
    """The StatusReply as a list, or None when nothing came back in time."""
    socket = context.socket(zmq.DEALER)
    socket.setsockopt(zmq.LINGER, 0)
    socket.curve_serverkey = server_public
    socket.curve_publickey = own_public
    socket.curve_secretkey = own_secret
    socket.connect(endpoint)
    try:
        socket.send(status_request(5))
        if not socket.poll(wait_ms, zmq.POLLIN):
            return None
        frame = socket.recv()
    finally:
        socket.close()
    if msgpack is None:
        return [frame]  # undecoded: the caller looks for the bytes
    return msgpack.unpackb(frame, raw=False, strict_map_key=False)


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 1
    if not zmq.has('curve'):
        print('SKIP: this libzmq has no Curve')
        return SKIP
    hub_public, hub_secret = zmq.curve_keypair()
    good_public, good_secret = zmq.curve_keypair()
    bad_public, bad_secret = zmq.curve_keypair()
    failures = []
    with tempfile.TemporaryDirectory(prefix='cascade-py-curve-') as workdir:
        hub, endpoint = start_hub(sys.argv[1], workdir, hub_secret, good_public)
        context = zmq.Context()
        try:
            reply = ask_status(context, endpoint, hub_public, good_public, good_secret,
                               REPLY_TIMEOUT_MS)
            if reply is None:
                failures.append('an authorised key got no StatusReply')
            elif msgpack is not None and (reply[1] != STATUS_REPLY or 'curve' not in reply):
                failures.append(f'not a StatusReply saying "curve": {reply!r}')
            elif msgpack is None and b'curve' not in reply[0]:
                failures.append('the StatusReply does not say "curve"')
            stranger = ask_status(context, endpoint, hub_public, bad_public, bad_secret,
                                  REFUSED_WAIT_MS)
            if stranger is not None:
                failures.append(f'an unknown key got an answer: {stranger!r}')
        finally:
            context.destroy(linger=0)
            hub.terminate()
            hub.wait(10)
        if failures:
            print(open(os.path.join(workdir, 'hub.log')).read())
    for failure in failures:
        print('FAIL:', failure)
    if not failures:
        print('PASS: authorised key answered with security "curve"; unknown key got nothing')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main())
