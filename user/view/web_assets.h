/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The page's files (user/view/web/), embedded in the binary at build time (build/view/
 * web_assets.c, written by scripts/embed_web.sh): the viewer needs no network and no files
 * besides the data directory. */
#ifndef SPANPROF_VIEW_WEB_ASSETS_H
#define SPANPROF_VIEW_WEB_ASSETS_H

#include <stddef.h>

struct web_asset {
	const char *path; /* "/index.html", "/view.js", ... */
	const unsigned char *data;
	size_t len;
};

extern const struct web_asset web_assets[];
extern const size_t web_assets_count;

#endif /* SPANPROF_VIEW_WEB_ASSETS_H */
