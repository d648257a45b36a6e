#!/usr/bin/env python3
"""Test server run inside a sandbox namespace.

GET  /name          -> the sandbox name (and the peer address seen)
GET  /blob?n=BYTES  -> BYTES of deterministic data (sha256 of it is what blob_sha256 prints)
PUT  /sha           -> sha256 hex of the request body
"""
import argparse
import hashlib
import http.server
import socketserver
import socket
import threading
import time
import urllib.parse


def blob(n):
    """Deterministic bytes: a repeating 64 KiB block derived from a hash chain."""
    block = b''
    h = b'cubevs-fp'
    while len(block) < 65536:
        h = hashlib.sha256(h).digest()
        block += h
    for off in range(0, n, len(block)):
        yield block[:min(len(block), n - off)]


def peer_ip(a):
    """An IPv4 peer of a dual-stack socket as its IPv4 address."""
    return a[7:] if a.startswith('::ffff:') else a


def sock(kind, v6):
    """A socket of 'kind' for 0.0.0.0, or with v6 for :: and IPv4 too (dual-stack)."""
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET, kind)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    return s


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = 'HTTP/1.1'

    def log_message(self, *args):
        pass

    def reply(self, code, body):
        self.send_response(code)
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self):
        url = urllib.parse.urlparse(self.path)
        if url.path == '/peer':
            self.reply(200, ('%s %d\n' % (peer_ip(self.client_address[0]),
                                           self.client_address[1])).encode())
        elif url.path == '/slow':
            # A long download: one line every 100 ms, for n lines.
            n = int(urllib.parse.parse_qs(url.query).get('n', ['600'])[0])
            self.send_response(200)
            self.send_header('Content-Length', str(6 * n))
            self.end_headers()
            for i in range(n):
                self.wfile.write(b'%05d\n' % i)
                self.wfile.flush()
                time.sleep(0.1)
        elif url.path == '/name':
            self.reply(200, ('%s %s\n' % (self.server.name,
                                           peer_ip(self.client_address[0]))).encode())
        elif url.path == '/blob':
            n = int(urllib.parse.parse_qs(url.query).get('n', ['0'])[0])
            self.send_response(200)
            self.send_header('Content-Length', str(n))
            self.end_headers()
            for chunk in blob(n):
                self.wfile.write(chunk)
        else:
            self.reply(404, b'not found\n')

    def do_PUT(self):
        n = int(self.headers.get('Content-Length', '0'))
        h = hashlib.sha256()
        while n > 0:
            chunk = self.rfile.read(min(n, 1 << 16))
            if not chunk:
                break
            h.update(chunk)
            n -= len(chunk)
        self.reply(200, (h.hexdigest() + '\n').encode())

    do_POST = do_PUT


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    request_queue_size = 512


def udp_echo(port, v6):
    s = sock(socket.SOCK_DGRAM, v6)
    s.bind(('::' if v6 else '0.0.0.0', port))
    while True:
        data, peer = s.recvfrom(65535)
        s.sendto(data + (' %s %d' % (peer_ip(peer[0]), peer[1])).encode(), peer)


def tcp_echo(port, v6):
    srv = sock(socket.SOCK_STREAM, v6)
    srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    srv.bind(('::' if v6 else '0.0.0.0', port))
    srv.listen(256)

    def serve(c):
        with c:
            while True:
                try:
                    data = c.recv(65536)
                    if not data:
                        return
                    c.sendall(data)
                except ConnectionResetError:
                    return  # a test reset the connection on purpose
    while True:
        c, _ = srv.accept()
        threading.Thread(target=serve, args=(c,), daemon=True).start()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--name', default='sandbox')
    ap.add_argument('--port', type=int, default=8080)
    ap.add_argument('--blob-sha', type=int, help='print the sha256 of a blob of N bytes')
    ap.add_argument('--udp-echo', type=int, help='also echo UDP on this port (+ peer address)')
    ap.add_argument('--tcp-echo', type=int, help='also echo raw TCP on this port')
    ap.add_argument('--ipv6', action='store_true', help='listen on IPv6 too (dual-stack)')
    a = ap.parse_args()
    if a.blob_sha is not None:
        h = hashlib.sha256()
        for chunk in blob(a.blob_sha):
            h.update(chunk)
        print(h.hexdigest())
        return
    if a.udp_echo:
        threading.Thread(target=udp_echo, args=(a.udp_echo, a.ipv6), daemon=True).start()
    if a.tcp_echo:
        threading.Thread(target=tcp_echo, args=(a.tcp_echo, a.ipv6), daemon=True).start()
    if a.ipv6:
        Server.address_family = socket.AF_INET6
    srv = Server(('::' if a.ipv6 else '0.0.0.0', a.port), Handler)
    srv.name = a.name
    srv.serve_forever()


if __name__ == '__main__':
    main()
