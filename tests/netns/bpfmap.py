#!/usr/bin/env python3
"""Dump a pinned BPF hash map as JSON pairs of hex strings [[key, value], ...], through the
bpf() system call (no bpftool on the bed). Usage: bpfmap.py PIN KEY_SIZE VALUE_SIZE"""
import ctypes, json, os, sys

SYS_BPF = 321  # x86_64
BPF_MAP_LOOKUP_ELEM, BPF_MAP_GET_NEXT_KEY, BPF_OBJ_GET = 1, 4, 7
libc = ctypes.CDLL(None, use_errno=True)


def bpf(cmd, attr):
    ret = libc.syscall(SYS_BPF, cmd, ctypes.byref(attr), ctypes.sizeof(attr))
    return ret, ctypes.get_errno()


class ObjGet(ctypes.Structure):
    _fields_ = [("pathname", ctypes.c_uint64), ("bpf_fd", ctypes.c_uint32),
                ("file_flags", ctypes.c_uint32)]


class Elem(ctypes.Structure):
    _fields_ = [("map_fd", ctypes.c_uint32), ("pad", ctypes.c_uint32),
                ("key", ctypes.c_uint64), ("value", ctypes.c_uint64),
                ("flags", ctypes.c_uint64)]


def dump(pin, ksz, vsz):
    path = ctypes.create_string_buffer(pin.encode())
    fd, err = bpf(BPF_OBJ_GET, ObjGet(ctypes.addressof(path), 0, 0))
    if fd < 0:
        sys.exit("%s: %s" % (pin, os.strerror(err)))
    key, nxt, val = (ctypes.create_string_buffer(n) for n in (ksz, ksz, vsz))
    out, first = [], True
    while len(out) < 1 << 20:
        a = Elem(fd, 0, 0 if first else ctypes.addressof(key), ctypes.addressof(nxt), 0)
        ret, err = bpf(BPF_MAP_GET_NEXT_KEY, a)
        if ret < 0:
            break
        first = False
        ctypes.memmove(key, nxt, ksz)
        ret, err = bpf(BPF_MAP_LOOKUP_ELEM, Elem(fd, 0, ctypes.addressof(key),
                                                 ctypes.addressof(val), 0))
        if ret == 0:
            out.append([key.raw.hex(), val.raw.hex()])
    os.close(fd)
    return out


json.dump(dump(sys.argv[1], int(sys.argv[2]), int(sys.argv[3])), sys.stdout)
print()
