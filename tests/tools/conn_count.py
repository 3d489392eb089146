#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""Count the connections a client makes, for lidiagen's tests: what it retries.

    conn_count.py --port-file F --count-file C [--tls CERT KEY]

Listens on 127.0.0.1 only, on a port the OS picks, written to F (F.tmp, then
renamed) once listening. Each connection accepted rewrites C with the number
accepted so far. Without --tls it is a plain-HTTP server: whatever comes, it
answers 400 and closes, so a client that speaks TLS to it fails its handshake
(an https:// endpoint that is plain HTTP). With --tls it makes the handshake
with CERT and KEY (a self-signed certificate, which a client that verifies
refuses), then answers the same. SIGTERM or SIGINT stop it (exit 0).
"""
import argparse
import os
import signal
import socket
import ssl
import sys

ANSWER = b'HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n'


def write_atomic(path, text):
    with open(path + '.tmp', 'w') as f:
        f.write(text)
    os.replace(path + '.tmp', path)


def serve_one(conn, ctx):
    """Answer one connection; a handshake the client gives up is its own failure."""
    conn.settimeout(5)
    try:
        if ctx:
            conn = ctx.wrap_socket(conn, server_side=True)
        conn.recv(65536)
        conn.sendall(ANSWER)
    except (OSError, ssl.SSLError):
        pass
    finally:
        conn.close()


def main(argv):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument('--port-file', required=True)
    p.add_argument('--count-file', required=True)
    p.add_argument('--tls', nargs=2, metavar=('CERT', 'KEY'))
    args = p.parse_args(argv)
    ctx = None
    if args.tls:
        ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        ctx.load_cert_chain(*args.tls)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    srv = socket.socket()
    srv.bind(('127.0.0.1', 0))
    srv.listen(16)
    write_atomic(args.count_file, '0\n')
    write_atomic(args.port_file, '%d\n' % srv.getsockname()[1])
    count = 0
    try:
        while True:
            conn, _ = srv.accept()
            count += 1
            write_atomic(args.count_file, '%d\n' % count)
            serve_one(conn, ctx)
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
