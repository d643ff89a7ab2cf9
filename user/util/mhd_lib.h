/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libmicrohttpd, loaded when a server first starts (--metrics-addr, `spanprof view`) rather than
 * linked: linked, it and the TLS stack it brings (GnuTLS, nettle, GMP, p11-kit) took about 3 MB
 * of the agent's resident memory in every run, with or without a server. */
#ifndef SPANPROF_MHD_LIB_H
#define SPANPROF_MHD_LIB_H

#include <microhttpd.h>

/* The libmicrohttpd functions the servers call, named without their MHD_ prefix. */
struct mhd_lib {
	struct MHD_Daemon *(*start_daemon)(unsigned int flags, uint16_t port,
					   MHD_AcceptPolicyCallback apc, void *apc_cls,
					   MHD_AccessHandlerCallback dh, void *dh_cls, ...);
	void (*stop_daemon)(struct MHD_Daemon *daemon);
	struct MHD_Response *(*create_response_from_buffer)(size_t size, void *buffer,
							    enum MHD_ResponseMemoryMode mode);
	enum MHD_Result (*add_response_header)(struct MHD_Response *response, const char *header,
					       const char *content);
	enum MHD_Result (*queue_response)(struct MHD_Connection *connection,
					  unsigned int status_code, struct MHD_Response *response);
	void (*destroy_response)(struct MHD_Response *response);
	const char *(*lookup_connection_value)(struct MHD_Connection *connection,
					       enum MHD_ValueKind kind, const char *key);
};

/* libmicrohttpd's functions, loaded (libmicrohttpd.so.12) by the first call from any thread, at
 * most once a process; every call after a success returns the same table. NULL with errno set
 * when the library or one of its functions is missing, the reason logged once. */
const struct mhd_lib *mhd_lib(void);

#endif /* SPANPROF_MHD_LIB_H */
