/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-family instantiation of a file of session functions (tcpwin_fn.h, ct_tcp_fn.h):
 * TW_FN_HEADER is included once on struct ct_session (names tcpwin_*) and once on struct
 * ct6_session (names tcpwin6_*). Include with TW_FN_HEADER defined; it is undefined after.
 * No include guard: each inclusion instantiates another file.
 */
#define TW_SESSION	struct ct_session
#define TW_TABLE	struct ct_table
#define TW_(name)	tcpwin_##name
#include TW_FN_HEADER
#undef TW_SESSION
#undef TW_TABLE
#undef TW_
#define TW_SESSION	struct ct6_session
#define TW_TABLE	struct ct6_table
#define TW_(name)	tcpwin6_##name
#include TW_FN_HEADER
#undef TW_SESSION
#undef TW_TABLE
#undef TW_
#undef TW_FN_HEADER
