/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: files: directories made with their parents, trees removed, whole files read and
 * written atomically, random bytes from the kernel (files.c).
 */
#ifndef GW_FILES_H
#define GW_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

int rand_bytes(void *buf, size_t len);
int rand_hex(char *out, size_t nbytes);

int dir_make_parents(const char *dir, mode_t mode);
int path_parent_make(const char *path, mode_t mode);
int path_remove_all(const char *path);
char *file_read_all(const char *path, size_t *len, int *rc);
bool fd_is_valid(int fd);
/* cvs_file_replace() (common/) with the parent directory made and the gateway's errors. */
int file_write_atomic(const char *path, const void *data, size_t len, mode_t mode,
		      mode_t dirmode, char **err);

#endif /* GW_FILES_H */
