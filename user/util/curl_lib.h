/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* libcurl, loaded when the agent first needs it (a push server, the Kubernetes API) rather than
 * linked: linked, it and what it brings (OpenSSL, Kerberos, LDAP, SSH) took about 6 MB of the
 * agent's resident memory, and its initialisation 2 MB more, in every run that never used it. */
#ifndef SPANPROF_CURL_LIB_H
#define SPANPROF_CURL_LIB_H

#include <curl/curl.h>

/* The libcurl functions the agent calls, named without their curl_ prefix. */
struct curl_lib {
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *curl, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *curl);
	CURLcode (*easy_getinfo)(CURL *curl, CURLINFO info, ...);
	void (*easy_reset)(CURL *curl);
	void (*easy_cleanup)(CURL *curl);
	const char *(*easy_strerror)(CURLcode code);
	char *(*easy_escape)(CURL *curl, const char *s, int len);
	void (*free)(void *p);
	struct curl_slist *(*slist_append)(struct curl_slist *list, const char *s);
	void (*slist_free_all)(struct curl_slist *list);
	CURLM *(*multi_init)(void);
	CURLMcode (*multi_add_handle)(CURLM *multi, CURL *curl);
	CURLMcode (*multi_remove_handle)(CURLM *multi, CURL *curl);
	CURLMcode (*multi_perform)(CURLM *multi, int *running);
	CURLMcode (*multi_poll)(CURLM *multi, struct curl_waitfd extra[], unsigned int nextra,
				int timeout_ms, int *ret);
	CURLMcode (*multi_wakeup)(CURLM *multi);
	CURLMsg *(*multi_info_read)(CURLM *multi, int *left);
	CURLMcode (*multi_cleanup)(CURLM *multi);
	CURLU *(*url)(void);
	void (*url_cleanup)(CURLU *u);
	CURLUcode (*url_set)(CURLU *u, CURLUPart part, const char *content, unsigned int flags);
	CURLUcode (*url_get)(const CURLU *u, CURLUPart part, char **out, unsigned int flags);
};

/* libcurl's functions, loaded (libcurl.so.4) and initialised (curl_global_init) by the first
 * call from any thread, at most once a process; every call after a success returns the same
 * table. NULL when the library or one of its functions is missing, or its initialisation
 * failed, the reason logged once. */
const struct curl_lib *curl_lib(void);

#endif /* SPANPROF_CURL_LIB_H */
