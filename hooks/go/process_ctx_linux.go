// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

//go:build linux

package spanprof

import (
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
	"unsafe"
)

const (
	ctxHeaderSize    = 32
	ctxVersion       = 2
	prSetVMA         = 0x53564d41
	prSetVMAAnonName = 0
	mfdCloexec       = 1
	madvDontfork     = 10
)

// ctxHeader is the OTEP 4719 header at the start of the mapping.
type ctxHeader struct {
	signature   [8]byte
	version     uint32
	payloadSize uint32
	publishedAt uint64
	payload     uint64
}

var ctxState struct {
	sync.Mutex
	mem   []byte
	named bool // a memfd: readers find it by its file name even where prctl fails
}

// memfdCreate is memfd_create's system call number, 0 where this file does not know it.
func memfdCreate() uintptr {
	switch runtime.GOARCH {
	case "amd64":
		return 319
	case "arm64":
		return 279
	}
	return 0
}

// newCtxMapping maps size bytes: a memfd named OTEL_CTX ("/memfd:OTEL_CTX" in maps), else
// anonymous memory; either way not inherited by forked children.
func newCtxMapping(size int) ([]byte, bool, error) {
	name := []byte("OTEL_CTX\x00")
	prot := syscall.PROT_READ | syscall.PROT_WRITE
	if nr := memfdCreate(); nr != 0 {
		fd, _, e := syscall.Syscall(nr, uintptr(unsafe.Pointer(&name[0])), mfdCloexec, 0)
		if e == 0 {
			mem, err := func() ([]byte, error) {
				defer syscall.Close(int(fd))
				if err := syscall.Ftruncate(int(fd), int64(size)); err != nil {
					return nil, err
				}
				return syscall.Mmap(int(fd), 0, size, prot, syscall.MAP_PRIVATE)
			}()
			if err == nil {
				_ = syscall.Madvise(mem, madvDontfork)
				return mem, true, nil
			}
		}
	}
	mem, err := syscall.Mmap(-1, 0, size, prot, syscall.MAP_PRIVATE|syscall.MAP_ANON)
	if err != nil {
		return nil, false, err
	}
	_ = syscall.Madvise(mem, madvDontfork)
	return mem, false, nil
}

// PublishProcessContext publishes attrs (the SDK resource's attributes: service.name,
// service.namespace, ...) as OpenTelemetry process context (OTEP 4719), which the spanprof
// agent reads to name the process's profiles. Calling it again replaces the attributes.
func PublishProcessContext(attrs map[string]string) error {
	payload := encodeProcessContext(attrs)
	if len(payload) > ctxPayloadMax {
		return ErrContextTooLarge
	}
	page := syscall.Getpagesize()
	size := (ctxHeaderSize + len(payload) + page - 1) / page * page
	ctxState.Lock()
	defer ctxState.Unlock()
	if len(ctxState.mem) < size {
		mem, named, err := newCtxMapping(size)
		if err != nil {
			return err
		}
		if ctxState.mem != nil {
			_ = syscall.Munmap(ctxState.mem)
		}
		ctxState.mem, ctxState.named = mem, named
	}
	mem := ctxState.mem
	h := (*ctxHeader)(unsafe.Pointer(&mem[0]))
	// Update protocol: readers retry while the timestamp is zero or changed under them.
	atomic.StoreUint64(&h.publishedAt, 0)
	copy(mem[ctxHeaderSize:], payload)
	h.payloadSize = uint32(len(payload))
	h.payload = uint64(uintptr(unsafe.Pointer(&mem[ctxHeaderSize])))
	h.version = ctxVersion
	copy(h.signature[:], "OTEL_CTX")
	atomic.StoreUint64(&h.publishedAt, uint64(time.Now().UnixNano()))
	name := []byte("OTEL_CTX\x00")
	_, _, e := syscall.Syscall6(syscall.SYS_PRCTL, prSetVMA, prSetVMAAnonName,
		uintptr(unsafe.Pointer(&mem[0])), uintptr(len(mem)), uintptr(unsafe.Pointer(&name[0])), 0)
	if e != 0 && !ctxState.named {
		return e // no memfd and no anonymous names (CONFIG_ANON_VMA_NAME): nobody can find it
	}
	return nil
}
