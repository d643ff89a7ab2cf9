// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libmicrohttpd loaded on first use: dlopen, one dlsym per function, once. The table is written
 * once under pthread_once and only read after it; the library is never unloaded (a server's
 * thread may run until exit). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>

#include "util/log.h"
#include "util/mhd_lib.h"

/* The soname of libmicrohttpd 0.9.x, the ABI the declarations above are of. */
#define MHD_SONAME "libmicrohttpd.so.12"

static struct mhd_lib loaded;
static const struct mhd_lib *usable; /* &loaded once all went well */
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

/* One entry of the table: the symbol's name and where its address goes. */
struct mhd_sym {
	const char *name;
	void **slot;
};

#define SYM(field)                                    \
	{                                             \
		"MHD_" #field, (void **)&loaded.field \
	}

static void load(void)
{
	const struct mhd_sym syms[] = {
		SYM(start_daemon),
		SYM(stop_daemon),
		SYM(create_response_from_buffer),
		SYM(add_response_header),
		SYM(queue_response),
		SYM(destroy_response),
		SYM(lookup_connection_value),
	};
	void *lib = dlopen(MHD_SONAME, RTLD_NOW | RTLD_LOCAL);
	size_t i;

	if (!lib) {
		log_err(-ENOENT, "load %s (the metrics server and the viewer need it): %s",
			MHD_SONAME, dlerror());
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		*syms[i].slot = dlsym(lib, syms[i].name);
		if (!*syms[i].slot) {
			log_err(-ENOENT, "%s has no %s", MHD_SONAME, syms[i].name);
			return;
		}
	}
	usable = &loaded;
}

#undef SYM

const struct mhd_lib *mhd_lib(void)
{
	pthread_once(&load_once, load);
	if (!usable)
		errno = ENOENT;
	return usable;
}
