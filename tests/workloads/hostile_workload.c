// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Test workload playing a hostile local process: JIT code whose perf map is a FIFO, a symlink
 * or the real thing; a crafted file mapped executable; a library it truncates under the agent. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* Where the JIT code goes, so tests can write perf map lines for it in advance. */
#define JIT_ADDR 0x7e5500000000ull
#define JIT_SIZE 4096

static volatile unsigned long sink;

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static __attribute__((noinline)) void hostile_spin(double end)
{
	while (now_s() < end)
		for (int i = 0; i < 2000; i++)
			sink += i;
}

/* A perf map of `lines` 63-byte lines, none of them covering the JIT code: every sample of it
 * misses. */
static int write_big_map(FILE *f, long lines)
{
	long i;

	for (i = 0; i < lines; i++)
		fprintf(f, "%llx 40 jit_stub_%010ld_never_sampled_padding_padding\n",
			0x10000000ull + (unsigned long long)i * 0x40, i);
	return fclose(f);
}

/* Writes the perf map the mode asks for: "fifo", "devzero" (a symlink to /dev/zero),
 * "link:TARGET" (a symlink), "own" (a real map naming the JIT code), "big:LINES" (a large map
 * that misses it) or "none". */
static int make_perf_map(const char *kind)
{
	char path[64];
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	unlink(path);
	if (!strncmp(kind, "big:", 4)) {
		f = fopen(path, "w");
		return f ? write_big_map(f, atol(kind + 4)) : -1;
	}
	if (!strcmp(kind, "fifo"))
		return mkfifo(path, 0644);
	if (!strcmp(kind, "devzero"))
		return symlink("/dev/zero", path);
	if (!strncmp(kind, "link:", 5))
		return symlink(kind + 5, path);
	if (strcmp(kind, "own"))
		return 0;
	f = fopen(path, "w");
	if (!f)
		return -1;
	fprintf(f, "%llx %x jit_spin_code\n", JIT_ADDR, JIT_SIZE);
	return fclose(f);
}

/* JIT: a loop in anonymous executable memory (mov ecx, 0x40000; 1: dec ecx; jnz 1b; ret). */
static int run_jit(const char *kind, double secs)
{
	static const unsigned char code[] = { 0xb9, 0x00, 0x00, 0x04, 0x00,
					      0xff, 0xc9, 0x75, 0xfc, 0xc3 };
	double end = now_s() + secs;
	void (*fn)(void);
	void *mem;

	mem = mmap((void *)JIT_ADDR, JIT_SIZE, PROT_READ | PROT_WRITE | PROT_EXEC,
		   MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (mem == MAP_FAILED || make_perf_map(kind)) {
		perror("jit set-up");
		return 1;
	}
	memcpy(mem, code, sizeof(code));
	fn = (void (*)(void))mem;
	printf("ready\n");
	fflush(stdout);
	while (now_s() < end) { /* a tenth of a CPU: enough to be sampled, leaves room */
		for (double slice = now_s() + 0.005; now_s() < slice;)
			fn();
		usleep(45000);
	}
	return 0;
}

/* Maps a (crafted) file executable, as a loader would, and keeps the CPU busy. */
static int run_map(const char *path, double secs)
{
	int fd = open(path, O_RDONLY);
	struct stat st;

	if (fd < 0 || fstat(fd, &st) ||
	    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
		perror(path);
		return 1;
	}
	printf("ready\n");
	fflush(stdout);
	for (double end = now_s() + secs; now_s() < end; usleep(45000))
		hostile_spin(now_s() + 0.005); /* a tenth of a CPU */
	return 0;
}

/* Waits for the file gate, then maps path as run_map does (a victim whose library appears
 * after the agent started). */
static int run_map_after(const char *path, const char *gate, double secs)
{
	printf("ready\n");
	fflush(stdout);
	while (access(gate, F_OK))
		usleep(20000);
	return run_map(path, secs);
}

/* Says ready, waits for the file gate, then maps every file of files[] executable (a user
 * whose many crafted hook files appear while the agent runs) and keeps the CPU a little busy. */
static int run_map_many(const char *gate, double secs, char **files, int n)
{
	struct stat st;
	int i, fd;

	printf("ready\n");
	fflush(stdout);
	while (access(gate, F_OK))
		usleep(20000);
	for (i = 0; i < n; i++) {
		fd = open(files[i], O_RDONLY);
		if (fd < 0 || fstat(fd, &st) ||
		    mmap(NULL, st.st_size, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0) ==
			    MAP_FAILED) {
			perror(files[i]);
			return 1;
		}
		close(fd);
	}
	printf("mapped %d\n", n);
	fflush(stdout);
	for (double end = now_s() + secs; now_s() < end; usleep(45000))
		hostile_spin(now_s() + 0.005);
	return 0;
}

/* End of the library's loaded file contents: what it may keep when truncated. */
static int loaded_end(struct dl_phdr_info *info, size_t size, void *data)
{
	struct {
		const char *name;
		off_t end;
	} *want = data;
	int i;

	(void)size;
	if (!strstr(info->dlpi_name, want->name))
		return 0;
	for (i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD &&
		    (off_t)(info->dlpi_phdr[i].p_offset + info->dlpi_phdr[i].p_filesz) > want->end)
			want->end = info->dlpi_phdr[i].p_offset + info->dlpi_phdr[i].p_filesz;
	return 1;
}

/* dlopen()s lib, waits for go_file, then truncates lib after its loaded segments (cutting off
 * symbol tables and DWARF, which the agent may have mapped) and runs its spin function. */
static int run_truncate(const char *lib, const char *go_file, double secs)
{
	struct {
		const char *name;
		off_t end;
	} want = { strrchr(lib, '/') ? strrchr(lib, '/') + 1 : lib, 0 };
	void (*spin)(double);
	long page = sysconf(_SC_PAGESIZE);
	void *h = dlopen(lib, RTLD_NOW);

	spin = h ? (void (*)(double))dlsym(h, "hostile_lib_spin") : NULL;
	if (!spin) {
		fprintf(stderr, "dlopen %s: %s\n", lib, dlerror());
		return 1;
	}
	dl_iterate_phdr(loaded_end, &want);
	printf("ready\n");
	fflush(stdout);
	while (access(go_file, F_OK)) /* busy, so the agent samples us and opens the library */
		hostile_spin(now_s() + 0.01);
	if (!want.end || truncate(lib, (want.end + page - 1) / page * page)) {
		perror("truncate");
		return 1;
	}
	spin(now_s() + secs);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "jit"))
		return run_jit(argv[2], atof(argv[3]));
	if (argc == 4 && !strcmp(argv[1], "map"))
		return run_map(argv[2], atof(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "mapafter"))
		return run_map_after(argv[2], argv[3], atof(argv[4]));
	if (argc >= 5 && !strcmp(argv[1], "mapmany"))
		return run_map_many(argv[2], atof(argv[3]), argv + 4, argc - 4);
	if (argc == 5 && !strcmp(argv[1], "truncate"))
		return run_truncate(argv[2], argv[3], atof(argv[4]));
	fprintf(stderr,
		"usage: %s jit fifo|devzero|link:PATH|own|big:LINES|none SECONDS\n"
		"       %s map FILE SECONDS\n"
		"       %s mapafter FILE GATE SECONDS\n"
		"       %s mapmany GATE SECONDS FILE...\n"
		"       %s truncate LIB GO_FILE SECONDS\n",
		argv[0], argv[0], argv[0], argv[0], argv[0]);
	return 2;
}
