/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the commands main.c dispatches to (launch.c, serve.c, main.c's own pull and
 * catalog) and the files the launcher and serve agree on.
 */
#ifndef GW_CMD_H
#define GW_CMD_H

#define GW_DEFAULT_TIMEOUT_NS	(55LL * 1000000000LL)
#define GW_TOKEN_FILE		"/etc/mcp-gateway/.token"
#define GW_PID_FILE		"/run/mcp-gateway.pid"
#define GW_LOG_FILE		"/var/log/mcp-gateway.log"

int cmd_launch(int argc, char **argv);
int cmd_serve(int argc, char **argv);
int cmd_pull(int argc, char **argv);
int cmd_catalog(int argc, char **argv);

#endif /* GW_CMD_H */
