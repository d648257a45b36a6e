/* SPDX-License-Identifier: BSD-3-Clause */
/* Helpers shared by the kit's loaders (fpgen, fpsink, fpdut): options, addresses, BPF objects. */
#ifndef FPB_UTIL_H
#define FPB_UTIL_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct bpf_object;

extern volatile sig_atomic_t fpb_stop;

/* SIGINT/SIGTERM set fpb_stop; libbpf messages go to stderr only at warning level and above. */
void fpb_init(const char *prog);
void fpb_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

uint64_t fpb_now_ns(void);
void fpb_sleep_until(uint64_t t_ns);	/* returns early when fpb_stop is set */
int fpb_pin_cpu(int cpu);

/* Addresses: parse dotted quad into host order; refuse anything outside 198.18.0.0/15. */
uint32_t fpb_parse_ip(const char *s, const char *what);
void fpb_check_range(uint32_t first, uint32_t last, const char *what);
/* IPv6: into a[16]; refuse anything outside 2001:2::/48; returns its last 32 bits, host order. */
uint32_t fpb_parse_ip6(const char *s, const char *what, uint8_t a[16]);
int fpb_parse_mac(const char *s, uint8_t mac[6]);
int fpb_iface_mac(const char *ifname, uint8_t mac[6]);
unsigned long fpb_parse_num(const char *s, const char *what, unsigned long max);

/* Open an embedded object and load it; NULL with a message on failure. */
struct bpf_object *fpb_bpf_open(const unsigned char *buf, size_t len, const char *name);

/* Sum one per-CPU array element of 'size' bytes made of u64 fields. */
int fpb_percpu_sum(int map_fd, uint32_t key, uint64_t *out, size_t nfields);

#endif /* FPB_UTIL_H */
