// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package spanprof

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"os"
	"strconv"
	"strings"
	"testing"
)

// readSelf copies n bytes at address addr of this process through /proc/self/mem, as another
// process reads them (and without turning an integer into a pointer).
func readSelf(t *testing.T, addr uint64, n int) []byte {
	f, err := os.Open("/proc/self/mem")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	buf := make([]byte, n)
	if _, err := f.ReadAt(buf, int64(addr)); err != nil {
		t.Fatalf("read %d bytes at %#x: %v", n, addr, err)
	}
	return buf
}

// findContext returns the header and payload this process published, read through its own
// /proc/self/maps and memory, as an outside reader would find them.
func findContext(t *testing.T) ([]byte, []byte) {
	f, err := os.Open("/proc/self/maps")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if !strings.Contains(line, "OTEL_CTX") {
			continue
		}
		start, err := strconv.ParseUint(line[:strings.IndexByte(line, '-')], 16, 64)
		if err != nil {
			t.Fatal(err)
		}
		hdr := readSelf(t, start, ctxHeaderSize)
		size := binary.LittleEndian.Uint32(hdr[12:])
		ptr := binary.LittleEndian.Uint64(hdr[24:])
		return hdr, readSelf(t, ptr, int(size))
	}
	t.Fatal("no OTEL_CTX mapping in /proc/self/maps")
	return nil, nil
}

func TestPublishedContextHasTheOTEPHeaderAndResource(t *testing.T) {
	attrs := map[string]string{"service.name": "go-in-code", "service.namespace": "shop"}
	if err := PublishProcessContext(attrs); err != nil {
		t.Fatal(err)
	}
	hdr, payload := findContext(t)
	if string(hdr[:8]) != "OTEL_CTX" || binary.LittleEndian.Uint32(hdr[8:]) != 2 ||
		binary.LittleEndian.Uint64(hdr[16:]) == 0 {
		t.Fatalf("bad header % x", hdr)
	}
	// service.name, then service.namespace (sorted keys), each KeyValue{key, AnyValue{string}}.
	want := encodeProcessContext(attrs)
	if !bytes.Equal(payload, want) || !bytes.Contains(payload, []byte("\x0a\x0cservice.name\x12\x0c\x0a\x0ago-in-code")) {
		t.Fatalf("payload % x", payload)
	}
	if err := PublishProcessContext(map[string]string{"service.name": "again"}); err != nil {
		t.Fatal(err)
	}
	if _, payload = findContext(t); !bytes.Contains(payload, []byte("again")) {
		t.Fatalf("republished payload % x", payload)
	}
}
