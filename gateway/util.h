/* SPDX-License-Identifier: BSD-3-Clause */
/* mcp-gateway: strings, buffers, durations, files, environments (util.c). */
#ifndef GW_UTIL_H
#define GW_UTIL_H

#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>
#include <sys/types.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

int sb_append(struct strbuf *sb, const void *p, size_t n);
int sb_appends(struct strbuf *sb, const char *s);
int sb_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_steal(struct strbuf *sb);
void sb_free(struct strbuf *sb);

int err_set(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_quote(const char *s);
bool str_blank(const char *s);
char *str_trim_dup(const char *s, size_t len);

int dur_parse(const char *s, int64_t *ns);
void dur_format(int64_t ns, char *buf, size_t len);
char *num_format(double v);

int rand_bytes(void *buf, size_t len);
int rand_hex(char *out, size_t nbytes);

int dir_make_parents(const char *dir, mode_t mode);
int path_parent_make(const char *path, mode_t mode);
int path_remove_all(const char *path);
char *file_read_all(const char *path, size_t *len, int *rc);
bool fd_is_valid(int fd);

size_t strv_len(char *const *v);
char **strv_dup(char *const *v);
char *strv_join(char *const *v, const char *sep);
int strv_push(char ***v, const char *s);
void strv_free(char **v);
void str_free_secure(char *s);
void strv_free_secure(char **v);
void jansson_scrub_frees(void);

char **env_build(char *const *extra);
char *exec_lookup(const char *name, char *const *envp);
void status_format(int status, char *buf, size_t len);
int64_t time_mono_ns(void);
/* The CLOCK_REALTIME instant ns from now, as pthread_cond_timedwait() wants it (ns >= 0). */
void time_deadline(struct timespec *ts, int64_t ns);

/* A bell one thread waits on and any rings; a ring is never lost between two waits. */
struct bell {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool rung;
	bool stop;
};

void bell_init(struct bell *b);
void bell_fini(struct bell *b);
void bell_ring(struct bell *b);
/* Rings for good: every wait from now on returns at once. */
void bell_stop(struct bell *b);
bool bell_stopped(struct bell *b);
/* Until rung, stopped, or ns passed (0: no limit); takes the ring. */
void bell_wait(struct bell *b, int64_t ns);

#endif /* GW_UTIL_H */
