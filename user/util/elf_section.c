// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Section reads of untrusted ELF files within a stated maximum (see elf_section.h). */
#include <errno.h>
#include <gelf.h>

#include "util/elf_section.h"

int elf_section_data(Elf_Scn *scn, size_t max_bytes, Elf_Data **data)
{
	GElf_Shdr sh;

	*data = NULL;
	if (!scn || !gelf_getshdr(scn, &sh))
		return -ENOEXEC;
	if (sh.sh_type != SHT_NOBITS && sh.sh_size > max_bytes)
		return -EFBIG;
	*data = elf_getdata(scn, NULL);
	return *data ? 0 : -ENOEXEC;
}

int elf_section_notes_fit(Elf *elf, size_t max_bytes)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n;

	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_NOTE && sh.sh_size > max_bytes)
			return -EFBIG;
	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_NOTE &&
		    ph.p_filesz > max_bytes)
			return -EFBIG;
	return 0;
}
