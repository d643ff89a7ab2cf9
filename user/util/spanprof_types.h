/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Brings the BPF/user ABI header into user space with the fixed-width types it expects. */
#ifndef SPANPROF_TYPES_H
#define SPANPROF_TYPES_H

#include <linux/types.h>

#include "spanprof_abi.h"

#endif /* SPANPROF_TYPES_H */
