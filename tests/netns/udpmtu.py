#!/usr/bin/env python3
"""UDP datagrams of a given size for the MTU tests (issue 33).

  udpmtu.py send HOST PORT SIZE df|nodf [COUNT]  send COUNT datagrams (1); with df the socket
      sets DF (IP_PMTUDISC_PROBE on the first, then DO): prints the path MTU the kernel has
      learnt for HOST afterwards (IP_MTU), which an ICMP fragmentation-needed lowers.
  udpmtu.py recv PORT COUNT TIMEOUT                print the size of each datagram received
"""
import socket
import sys
import time

IP_MTU_DISCOVER, IP_PMTUDISC_DONT, IP_PMTUDISC_DO, IP_MTU = 10, 0, 2, 14


def send(host, port, size, df, count=1):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO if df == 'df' else
                 IP_PMTUDISC_DONT)
    s.connect((host, port))
    for _ in range(count):
        try:
            s.send(b'x' * size)
        except OSError:
            pass  # EMSGSIZE once the kernel knows the path MTU
    time.sleep(0.5)
    try:
        s.send(b'x' * size)
    except OSError:
        pass
    print(s.getsockopt(socket.IPPROTO_IP, IP_MTU))


def recv(port, count, timeout):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(('0.0.0.0', port))
    s.settimeout(timeout)
    for _ in range(count):
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        print(len(data), flush=True)


if __name__ == '__main__':
    if sys.argv[1] == 'send':
        send(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5],
             int(sys.argv[6]) if len(sys.argv) > 6 else 1)
    else:
        recv(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]))
