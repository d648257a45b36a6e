/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Helpers that cubevs-fp, cubevs-fpctl and mcp-gateway share: writing a file descriptor out,
 * replacing a file atomically, one-line error messages and strict number parsing. libc only,
 * no DPDK, so every binary of the project links it.
 */
#ifndef CVS_COMMON_H
#define CVS_COMMON_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

/* Write all of BUF, going on after short writes and signals. Returns 0 or -errno. */
int cvs_write_all(int fd, const void *buf, size_t len);

/*
 * Replace PATH by a file of MODE holding DATA, so that a reader, or the next start after a
 * crash, finds the old content or the new one and never a part: a temp file beside PATH,
 * fsync, rename over PATH, fsync of the directory. The directory must exist.
 * Returns 0 or -errno, with a message naming the failed step and file in ERR.
 */
int cvs_file_replace(const char *path, const void *data, size_t len, mode_t mode,
		     char *err, size_t errlen);
/* fsync of the directory that holds path: what makes a rename in it durable. */
int cvs_dir_sync(const char *path, char *err, size_t errlen);

/*
 * PATH as a directory only we may enter: made 0700 when missing, then refused unless it is a
 * directory (not a link) owned by the effective uid with no access for group or others. WHAT
 * prefixes the messages (an option name and a space, or ""). Returns 0 or -errno with ERR.
 */
int cvs_private_dir(const char *path, const char *what, char *err, size_t errlen);

/* CLOCK_MONOTONIC, for intervals and deadlines. */
static inline uint64_t
cvs_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static inline uint64_t
cvs_now_ms(void)
{
	return cvs_now_ns() / 1000000ull;
}

/*
 * Room for N open files: the soft RLIMIT_NOFILE up to the hard one, and the fd table grown
 * to N entries now (N capped by the limit). Call it before the process has threads. Returns
 * the room the table is known to have: the capped N, or 0 when the limit could not be read or
 * no descriptor could be opened to grow it.
 */
unsigned int cvs_fd_room(unsigned int n);

/*
 * Giving freed heap memory back after many objects went (heaptrim.c): cvs_trim_tick() with the
 * count of live objects, at a steady period; it trims once the count has fallen by
 * CVS_TRIM_DROP and held still for CVS_TRIM_CALM ticks. Zeroed is the start state.
 */
#define CVS_TRIM_DROP	256u
#define CVS_TRIM_CALM	10u
struct cvs_trim {
	uint32_t high;	/* the most objects since the last trim */
	uint32_t seen;	/* the count at the last tick */
	uint32_t calm;	/* ticks it has held */
	uint32_t trims;
};
/* Returns whether it trimmed. */
bool cvs_trim_tick(struct cvs_trim *t, uint32_t count);

/* "PROG: message" and a newline on stderr, written at once so lines never interleave. */
void cvs_err(const char *prog, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void cvs_verr(const char *prog, const char *fmt, va_list ap)
	__attribute__((format(printf, 2, 0)));

/*
 * A decimal number in [LO, HI], all of S: no sign, no blanks, no trailing characters, not
 * empty, no overflow. Returns 0 or -EINVAL (and leaves *OUT alone).
 */
int cvs_parse_u32(const char *s, uint32_t lo, uint32_t hi, uint32_t *out);

/* A port range "LO-HI", 1..65535, LO <= HI (host order). */
struct cvs_range {
	uint16_t lo;
	uint16_t hi;
};

/* A dotted IPv4 address (network order), a MAC "aa:bb:cc:dd:ee:ff", a range: 0 or -EINVAL. */
int cvs_parse_ipv4(const char *s, uint32_t *out);
int cvs_parse_mac(const char *s, uint8_t mac[6]);
int cvs_parse_range(const char *s, struct cvs_range *r);
/* An IPv6 address in any form inet_pton() takes: 0 or -EINVAL. */
int cvs_parse_ipv6(const char *s, uint8_t out[16]);
/*
 * Why a (must be global unicast or unique local) cannot be a node's or guest's address off
 * the link: "unspecified", "loopback", "multicast", "link-local", "IPv4-mapped"; NULL when
 * it can be.
 */
const char *cvs_ipv6_not_unicast(const uint8_t a[16]);
/* "ADDR/LEN": ADDR copied into addr (addrlen bytes at most), LEN in [lo, hi]; 0 or -EINVAL. */
int cvs_split_prefix(const char *s, char *addr, size_t addrlen, uint32_t lo, uint32_t hi,
		     uint32_t *len);
/* "ADDR/LEN" (IPv6) with no bits set past LEN: 0 or -EINVAL. */
int cvs_parse_prefix6(const char *s, uint8_t out[16], uint32_t *len);

#endif /* CVS_COMMON_H */
