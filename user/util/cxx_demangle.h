/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* C++ symbol names demangled by libstdc++ (the Itanium C++ ABI's __cxa_demangle), loaded the
 * first time a mangled name is met rather than linked: linked, libstdc++ and the libm and
 * libgcc_s it brings took about 1.2 MB of the agent's resident memory in every run, and a node
 * that runs no C++ never needs it. */
#ifndef SPANPROF_CXX_DEMANGLE_H
#define SPANPROF_CXX_DEMANGLE_H

/* The demangled form of mangled (a "_Z..." name), malloc'd (the caller frees it), or NULL when
 * it is not a valid mangled name or libstdc++ cannot be loaded (said once in the log). */
char *cxx_demangle(const char *mangled);

#endif /* SPANPROF_CXX_DEMANGLE_H */
