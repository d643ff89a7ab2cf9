/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Test-only Pyroscope push receiver on 127.0.0.1 (libmicrohttpd): decodes every push with the
 * project's own protobuf-c code, records headers, and answers as the test scripts it. */
#ifndef SPANPROF_TEST_PUSH_RECEIVER_H
#define SPANPROF_TEST_PUSH_RECEIVER_H

#include <stddef.h>
#include <stdint.h>

#include "proto/profile.pb-c.h"
#include "proto/push.pb-c.h"

/* A status for push_receiver_answer(): keep the request waiting, unanswered, until
 * push_receiver_release() (it is then answered 503) or the receiver is freed. */
#define PUSH_RECEIVER_HANG (-1)

struct push_record {
	int status; /* what the receiver answered, or PUSH_RECEIVER_HANG */
	char *method, *path;
	char **headers; /* "Name: value" as received */
	size_t nheaders;
	size_t body_len; /* bytes on the wire */
	int gzipped; /* the body was gzip (and Content-Encoding said so) */
	Push__V1__PushRequest *req; /* NULL when the body did not decode */
	/* Each RawSample's raw_profile decoded, series by series; NULL where one did not decode. */
	Perftools__Profiles__Profile **profiles;
	size_t nprofiles;
};

struct push_receiver;

/* A push body, gzipped as the agent sends it, decoded. NULL when it is not gzip or does not
 * gunzip or decode; free with push__v1__push_request__free_unpacked(). */
Push__V1__PushRequest *push_request_gunzip(const uint8_t *gz, size_t len);

/* Starts a receiver on 127.0.0.1:port (0: any free port). NULL on failure. */
struct push_receiver *push_receiver_new(uint16_t port);
/* The same over HTTPS with this certificate and key (PEM text); the URL is https://. */
struct push_receiver *push_receiver_new_tls(uint16_t port, const char *cert_pem,
					    const char *key_pem);
/* Releases hanging requests, stops the server, frees every record. NULL-safe. */
void push_receiver_free(struct push_receiver *r);

uint16_t push_receiver_port(const struct push_receiver *r);
const char *push_receiver_url(const struct push_receiver *r); /* "http(s)://127.0.0.1:<port>" */

/* The next n requests are answered `status` (PUSH_RECEIVER_HANG: hang) with `message` as the
 * body (NULL: empty); after them, 200 again. n == 0: every request from now on. */
void push_receiver_answer(struct push_receiver *r, int status, unsigned int n, const char *message);
/* 3xx answers carry "Location: <base_url><the request's path>" (NULL: no Location). */
void push_receiver_set_location(struct push_receiver *r, const char *base_url);
/* 429 and 503 answers carry "Retry-After: <seconds>" (0: no header, the default). */
void push_receiver_set_retry_after(struct push_receiver *r, unsigned int seconds);
/* Lets hanging requests go (they are answered 503). */
void push_receiver_release(struct push_receiver *r);

/* Requests recorded so far (hanging ones are recorded when they arrive). */
size_t push_receiver_count(struct push_receiver *r);
/* Requests recorded with this status. */
size_t push_receiver_count_status(struct push_receiver *r, int status);
/* Waits up to timeout_ms until at least n requests with this status were recorded; returns how
 * many there are. */
size_t push_receiver_wait(struct push_receiver *r, int status, size_t n, unsigned int timeout_ms);
/* Record i (in arrival order), valid until push_receiver_free(); NULL when out of range. */
const struct push_record *push_receiver_record(struct push_receiver *r, size_t i);
/* TCP connections accepted so far. */
unsigned int push_receiver_connections(struct push_receiver *r);

/* Value of the first header with this name (case-insensitive), or NULL. */
const char *push_record_header(const struct push_record *rec, const char *name);
/* Value of the label of series s, or NULL. */
const char *push_record_label(const struct push_record *rec, size_t s, const char *name);

#endif /* SPANPROF_TEST_PUSH_RECEIVER_H */
