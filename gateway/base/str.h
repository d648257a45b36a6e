/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: strings and string vectors: a growing buffer, errors and quoting, vectors that
 * scrub what they held (secrets), and jansson's frees made to scrub too (str.c).
 */
#ifndef GW_STR_H
#define GW_STR_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

struct strbuf {
	char *buf;
	size_t len;
	size_t cap;
};

/* Room for n more bytes and the terminating NUL, for a caller that writes them itself. */
int sb_reserve(struct strbuf *sb, size_t n);
int sb_append(struct strbuf *sb, const void *p, size_t n);
int sb_appends(struct strbuf *sb, const char *s);
int sb_json_string(struct strbuf *sb, const char *s);
/* src (NULL: "") into dst of size n (> 0), cut to fit and always terminated. */
void str_copy(char *dst, size_t n, const char *src);
/*
 * v in decimal, zero-padded to at least width digits (at most 20), as "%0*lld" spells it but
 * without printf, which hot paths avoid: written at the end of buf, NUL-terminated; returns
 * where it starts.
 */
#define STR_INT_MAX	24
char *str_of_int(char buf[STR_INT_MAX], long long v, int width);
int sb_append_int(struct strbuf *sb, long long v, int width);
int sb_appendf(struct strbuf *sb, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
char *sb_steal(struct strbuf *sb);
void sb_free(struct strbuf *sb);

/*
 * The gateway's error convention (docs/mcp-gateway.md, "Errors"): functions return 0 or a
 * negative errno, constructors NULL. Where the caller needs a human-readable reason (every
 * user-visible failure does), the function also takes `char **err` and stores a malloc'd
 * message there (err_set()); the caller frees it or wraps it with context. MCP clients get
 * JSON-RPC error codes, listed in that section.
 */
int err_set(char **err, int rc, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
char *str_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
char *str_quote(const char *s);
bool str_blank(const char *s);
char *str_trim_dup(const char *s, size_t len);
char *num_format(double v);

size_t strv_len(char *const *v);
char **strv_dup(char *const *v);
char *strv_join(char *const *v, const char *sep);
int strv_push(char ***v, const char *s);
void strv_free(char **v);
void str_free_secure(char *s);
void strv_free_secure(char **v);
void jansson_scrub_frees(void);

#endif /* GW_STR_H */
