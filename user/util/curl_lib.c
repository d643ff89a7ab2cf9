// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libcurl loaded on first use: dlopen, one dlsym per function, curl_global_init, once. The table
 * is the process's one piece of library state, written once under pthread_once and only read
 * after it; libcurl is never unloaded (its global state lives until exit). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "util/curl_lib.h"
#include "util/log.h"

/* The soname of libcurl 7.16 and later, the ABI the declarations above are of. */
#define CURL_SONAME "libcurl.so.4"

static struct curl_lib loaded;
static const struct curl_lib *usable; /* &loaded once all went well */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* One entry of the table: the symbol's name and where its address goes. */
struct curl_sym {
	const char *name;
	void **slot;
};

#define SYM(field)                                     \
	{                                              \
		"curl_" #field, (void **)&loaded.field \
	}

static void load(void)
{
	const struct curl_sym syms[] = {
		SYM(easy_init),
		SYM(easy_setopt),
		SYM(easy_perform),
		SYM(easy_getinfo),
		SYM(easy_reset),
		SYM(easy_cleanup),
		SYM(easy_strerror),
		SYM(easy_escape),
		SYM(free),
		SYM(slist_append),
		SYM(slist_free_all),
		SYM(multi_init),
		SYM(multi_add_handle),
		SYM(multi_remove_handle),
		SYM(multi_perform),
		SYM(multi_poll),
		SYM(multi_wakeup),
		SYM(multi_info_read),
		SYM(multi_cleanup),
		SYM(url),
		SYM(url_cleanup),
		SYM(url_set),
		SYM(url_get),
	};
	CURLcode (*global_init)(long flags);
	void *lib = dlopen(CURL_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!lib) {
		log_err(-ENOENT, "load %s (pushes and Kubernetes metadata need it): %s",
			CURL_SONAME, dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot) {
			log_err(-ENOENT, "%s has no %s: libcurl 7.68 or later is needed",
				CURL_SONAME, syms[i].name);
			return;
		}
	}
	*(void **)&global_init = dlsym(lib, "curl_global_init");
	if (!global_init || global_init(CURL_GLOBAL_DEFAULT) != CURLE_OK) {
		log_err(-ENOMEM, "initialise libcurl");
		return;
	}
	usable = &loaded;
}

#undef SYM

const struct curl_lib *curl_lib(void)
{
	pthread_once(&load_once, load);
	if (!usable)
		errno = ENOENT;
	return usable;
}
