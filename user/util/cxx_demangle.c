// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libstdc++'s demangler loaded on first use: dlopen and one dlsym, once (pthread_once); the
 * function pointer is written there and only read after it. The library is never unloaded. */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>

#include "util/cxx_demangle.h"
#include "util/log.h"

/* The soname of libstdc++ since GCC 3.4, whose __cxa_demangle the declaration below is of. */
#define CXX_SONAME "libstdc++.so.6"

typedef char *(*demangle_fn)(const char *mangled, char *buf, size_t *len, int *status);

static demangle_fn demangle;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;

static void load(void)
{
	void *lib = dlopen(CXX_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!lib) {
		log_warn(-ENOENT, "load %s: C++ function names stay mangled: %s", CXX_SONAME,
			 dlerror());
		return;
	}
	*(void **)&demangle = dlsym(lib, "__cxa_demangle");
	if (!demangle)
		log_warn(-ENOENT, "%s has no __cxa_demangle: C++ function names stay mangled",
			 CXX_SONAME);
}

char *cxx_demangle(const char *mangled)
{
	int status = 0;
	char *out;

	pthread_once(&load_once, load);
	if (!demangle)
		return NULL;
	out = demangle(mangled, NULL, NULL, &status);
	if (out && status) {
		free(out);
		return NULL;
	}
	return out;
}
