// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test-only: crafted ELF files for hostile-input tests (see crafted_elf.h). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crafted_elf.h"
#include "fixture_build.h"

#define MAX_SECTIONS 16
#define PAGE 4096

static int write_at(int fd, const void *buf, size_t len, uint64_t off)
{
	return pwrite(fd, buf, len, (off_t)off) == (ssize_t)len ? 0 : -EIO;
}

static uint64_t align_up(uint64_t v, uint64_t a)
{
	return (v + a - 1) / a * a;
}

/* Section data from the second page on, each section where the previous one's claim ends. */
static int write_sections(int fd, const struct crafted_section *secs, size_t n, Elf64_Shdr *sh,
			  char *names, size_t *names_len, uint64_t *end)
{
	uint64_t off = PAGE, size;
	size_t i;
	int err;

	for (i = 0; i < n; i++) {
		size = secs[i].claimed > secs[i].len ? secs[i].claimed : secs[i].len;
		sh[i + 1] = (Elf64_Shdr){ .sh_name = *names_len,
					  .sh_type = secs[i].type,
					  .sh_flags = SHF_ALLOC,
					  .sh_addr = secs[i].addr,
					  .sh_offset = off,
					  .sh_size = size,
					  .sh_addralign = 8 };
		strcpy(names + *names_len, secs[i].name);
		*names_len += strlen(secs[i].name) + 1;
		err = secs[i].len ? write_at(fd, secs[i].data, secs[i].len, off) : 0;
		if (err)
			return err;
		off = align_up(off + size, 16);
	}
	*end = off;
	return 0;
}

int crafted_elf_write(const char *path, const struct crafted_section *secs, size_t n)
{
	Elf64_Shdr sh[MAX_SECTIONS + 2] = { { 0 } };
	char names[1024] = "";
	size_t names_len = 1;
	Elf64_Ehdr eh = { 0 };
	Elf64_Phdr ph = { .p_type = PT_LOAD,
			  .p_flags = PF_R | PF_X,
			  .p_filesz = PAGE,
			  .p_memsz = PAGE,
			  .p_align = PAGE };
	uint64_t end = PAGE;
	int fd, err;

	if (n > MAX_SECTIONS)
		return -E2BIG;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -errno;
	err = write_sections(fd, secs, n, sh, names, &names_len, &end);
	sh[n + 1] = (Elf64_Shdr){ .sh_name = names_len,
				  .sh_type = SHT_STRTAB,
				  .sh_offset = end,
				  .sh_size = names_len + sizeof(".shstrtab"),
				  .sh_addralign = 1 };
	strcpy(names + names_len, ".shstrtab");
	names_len += sizeof(".shstrtab");
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	eh.e_type = ET_DYN;
	eh.e_machine = EM_X86_64;
	eh.e_version = EV_CURRENT;
	eh.e_phoff = sizeof(eh);
	eh.e_phnum = 1;
	eh.e_phentsize = sizeof(ph);
	eh.e_shoff = align_up(end + names_len, 8);
	eh.e_shnum = n + 2;
	eh.e_shentsize = sizeof(Elf64_Shdr);
	eh.e_shstrndx = n + 1;
	eh.e_ehsize = sizeof(eh);
	if (!err)
		err = write_at(fd, names, names_len, end);
	if (!err)
		err = write_at(fd, sh, (n + 2) * sizeof(sh[0]), eh.e_shoff);
	if (!err)
		err = write_at(fd, &eh, sizeof(eh), 0);
	if (!err)
		err = write_at(fd, &ph, sizeof(ph), sizeof(eh));
	close(fd);
	return err;
}

int crafted_elf_set_link(const char *path, unsigned int ndx, uint32_t link, uint64_t entsize)
{
	Elf64_Ehdr eh;
	Elf64_Shdr sh;
	off_t at;
	int fd = open(path, O_RDWR | O_CLOEXEC), err = -EIO;

	if (fd < 0)
		return -errno;
	if (pread(fd, &eh, sizeof(eh), 0) != sizeof(eh) || ndx >= eh.e_shnum)
		goto out;
	at = (off_t)(eh.e_shoff + ndx * sizeof(sh));
	if (pread(fd, &sh, sizeof(sh), at) != sizeof(sh))
		goto out;
	sh.sh_link = link;
	sh.sh_entsize = entsize;
	err = write_at(fd, &sh, sizeof(sh), (uint64_t)at);
out:
	close(fd);
	return err;
}

uint64_t crafted_elf_disk_bytes(const char *path)
{
	struct stat st;

	return stat(path, &st) ? 0 : (uint64_t)st.st_blocks * 512;
}

int crafted_elf_extend_sections(const char *src, const char *dst, uint64_t nsec)
{
	Elf64_Shdr sh0 = { .sh_size = nsec };
	Elf64_Ehdr eh;
	struct stat st;
	int fd, err = 0;

	if (fixture_sh("cp '%s' '%s'", src, dst))
		return -EIO;
	fd = open(dst, O_RDWR | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || pread(fd, &eh, sizeof(eh), 0) != sizeof(eh)) {
		err = -EIO;
	} else {
		eh.e_shoff = ((uint64_t)st.st_size + 7) & ~7ull;
		eh.e_shnum = 0;
		eh.e_shstrndx = SHN_UNDEF;
		if (ftruncate(fd, (off_t)(eh.e_shoff + nsec * sizeof(sh0))) ||
		    pwrite(fd, &sh0, sizeof(sh0), (off_t)eh.e_shoff) != sizeof(sh0) ||
		    pwrite(fd, &eh, sizeof(eh), 0) != sizeof(eh))
			err = -EIO;
	}
	close(fd);
	return err;
}
