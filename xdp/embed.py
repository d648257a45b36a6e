#!/usr/bin/env python3
# Turns a compiled BPF object into a C source file holding its bytes, so cubevs-fp carries its
# own programs and never depends on a file found at run time.
import sys

src, out, name = sys.argv[1], sys.argv[2], sys.argv[3]
data = open(src, 'rb').read()
with open(out, 'w') as f:
    f.write('/* Generated from %s by xdp/embed.py; do not edit. */\n' % src.split('/')[-1])
    f.write('#include <stddef.h>\n')
    f.write('const unsigned char %s[] __attribute__((aligned(8))) = {\n' % name)
    for i in range(0, len(data), 16):
        f.write('\t' + ', '.join('0x%02x' % b for b in data[i:i + 16]) + ',\n')
    f.write('};\nconst size_t %s_len = %d;\n' % (name, len(data)))
