#!/usr/bin/env python3
"""Clients for the namespace tests (run inside the client namespace).

parallel HOST PORT N   open N connections at once, then GET /name on each; prints ok/failed
"""
import socket
import sys
import threading


def parallel(host, port, n):
    socks, errors = [], []
    # Open them all first, so N connections are really established at the same time.
    for _ in range(n):
        try:
            s = socket.create_connection((host, port), timeout=10)
            socks.append(s)
        except OSError as e:
            errors.append(str(e))
    ok = [0]
    lock = threading.Lock()

    def one(s):
        try:
            s.sendall(b'GET /name HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n')
            data = b''
            while True:
                chunk = s.recv(4096)
                if not chunk:
                    break
                data += chunk
            if b' 200 ' in data.split(b'\r\n', 1)[0] and b'sandbox' in data:
                with lock:
                    ok[0] += 1
        except OSError as e:
            errors.append(str(e))
        finally:
            s.close()

    threads = [threading.Thread(target=one, args=(s,)) for s in socks]
    for t in threads:
        t.start()
    for t in threads:
        t.join(30)
    print('ok=%d failed=%d' % (ok[0], n - ok[0]))
    if errors:
        print('first error: %s' % errors[0])
    return 0 if ok[0] == n else 1


if __name__ == '__main__':
    if sys.argv[1] == 'parallel':
        sys.exit(parallel(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
    sys.exit('unknown command')
