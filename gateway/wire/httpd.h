/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * mcp-gateway: the HTTP/1.1 server of the gateway (httpd.c, httpd_parse.c), on the gateway's
 * event loop (base/loop.h). It is small on purpose: the requests of MCP clients, one at a
 * time per connection, answers of known length or an event stream sent chunked.
 *
 * A request's handler (access) is called first with the headers (*con_cls is NULL), then
 * with each piece of the body (*upload_size > 0: the handler takes it and sets it to 0),
 * then with no body (all of it came) and again after each resume, until it queues an
 * answer. A handler whose answer is not there yet suspends the connection (hd_suspend) and
 * whoever has the answer resumes it (hd_resume, any thread). HD_NO closes the connection.
 * completed() runs once a request ends, its answer sent or its connection closed.
 *
 * Why not libmicrohttpd, which served until this file: its suspend and resume cost two
 * epoll_ctl and a pipe write per call, its edge-triggered reads one read that returns
 * EAGAIN, and each resume walked every suspended connection (each idle GET stream). Here a
 * connection joins the loop's set once, edge-triggered, and a suspended one costs nothing.
 */
#ifndef GW_HTTPD_H
#define GW_HTTPD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct loop;
struct hd;
struct hd_conn;
struct hd_resp;

enum hd_result { HD_NO = 0, HD_YES = 1 };

#define HTTP_CONTINUE			100
#define HTTP_OK				200
#define HTTP_ACCEPTED			202
#define HTTP_NO_CONTENT			204
#define HTTP_BAD_REQUEST		400
#define HTTP_UNAUTHORIZED		401
#define HTTP_FORBIDDEN			403
#define HTTP_NOT_FOUND			404
#define HTTP_METHOD_NOT_ALLOWED		405
#define HTTP_NOT_ACCEPTABLE		406
#define HTTP_CONTENT_TOO_LARGE		413
#define HTTP_UNSUPPORTED_MEDIA_TYPE	415
#define HTTP_HEADERS_TOO_LARGE		431
#define HTTP_INTERNAL_SERVER_ERROR	500
#define HTTP_NOT_IMPLEMENTED		501
#define HTTP_VERSION_NOT_SUPPORTED	505

typedef enum hd_result (*hd_access_fn)(void *cls, struct hd_conn *c, const char *url,
				       const char *method, const char *upload,
				       size_t *upload_size, void **con_cls);
typedef void (*hd_completed_fn)(void *cls, struct hd_conn *c, void **con_cls);

/*
 * A streamed answer's source: up to max bytes into buf, or 0 with the connection suspended
 * (more later), or one of these.
 */
#define HD_READ_END	((ssize_t)-1)	/* the stream ended: its last chunk goes out */
#define HD_READ_ERROR	((ssize_t)-2)	/* it broke: the connection closes without one */
typedef ssize_t (*hd_reader_fn)(void *cls, char *buf, size_t max);

struct hd_conf {
	hd_access_fn access;
	hd_completed_fn completed;
	void *cls;
	int listen_fd;		/* made non-blocking here; closed by hd_quiesce or hd_free */
	unsigned int conn_limit;	/* more are accepted and closed at once */
	unsigned int timeout_s;	/* a connection neither suspended nor moving closes after it */
	/*
	 * A request's head, once its first byte came, must be whole within this: a client
	 * trickling a byte now and then holds no connection for good (a slowloris).
	 */
	unsigned int head_timeout_s;
	/*
	 * Called before bytes of an answer are sent (NULL: nothing): what must be on disk before
	 * a client can see its answer (the audit lines held for the loop's turn) goes first.
	 */
	void (*before_send)(void *cls);
};

struct hd *hd_new(const struct hd_conf *conf);
/* Accepting starts: the listening socket joins l, whose turn() calls hd_turn(). */
int hd_attach(struct hd *d, struct loop *l);
/* On the loop's thread, from its turn(): resumed connections, timeouts; the next timeout. */
int hd_turn(struct hd *d);
/* Any thread: no new connection from now on; the listening socket is closed. */
void hd_quiesce(struct hd *d);
/* After the loop stopped: every connection closes (completed() runs), then d is freed. */
void hd_free(struct hd *d);

/* The first header of that name (any case), or NULL. */
const char *hd_header(struct hd_conn *c, const char *name);
/* The body's length as its Content-Length declared it, checked (0: none, or chunked). */
uint64_t hd_body_length(const struct hd_conn *c);
void hd_header_each(struct hd_conn *c, void (*fn)(void *arg, const char *name,
						  const char *value), void *arg);
int hd_fd(struct hd_conn *c);
/* On the loop's thread, inside a handler or a reader. */
void hd_suspend(struct hd_conn *c);
/* Any thread; the loop must then take a turn (loop_wake). */
void hd_resume(struct hd_conn *c);

/* An answer with this body (freed with free() once sent if owned). NULL: out of memory. */
struct hd_resp *hd_resp_buffer(size_t len, const char *body, bool owned);
/* An answer of unknown length, read block bytes at a time; free_cb(cls) when it is done. */
struct hd_resp *hd_resp_reader(size_t block, hd_reader_fn fn, void *cls,
			       void (*free_cb)(void *cls));
/* A header of the answer; the framing (length, chunking, Connection) is hd's. */
void hd_resp_header(struct hd_resp *r, const char *name, const char *value);
/* r is consumed, queued or not. */
enum hd_result hd_queue(struct hd_conn *c, unsigned int status, struct hd_resp *r);

#endif /* GW_HTTPD_H */
