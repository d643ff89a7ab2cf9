// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package spanprof

import (
	"errors"
	"sort"
)

// Errors PublishProcessContext returns besides system errors.
var (
	ErrContextTooLarge = errors.New("spanprof: process context payload over 64 KiB")
	ErrNoContext       = errors.New("spanprof: process context needs Linux")
)

const ctxPayloadMax = 64 * 1024 // what readers (the spanprof agent) accept

func appendVarint(b []byte, v uint64) []byte {
	for v >= 0x80 {
		b = append(b, byte(v)|0x80)
		v >>= 7
	}
	return append(b, byte(v))
}

// appendField appends field number `field` (wire type 2) holding data.
func appendField(b []byte, field byte, data []byte) []byte {
	b = append(b, field<<3|2)
	b = appendVarint(b, uint64(len(data)))
	return append(b, data...)
}

// encodeProcessContext encodes ProcessContext{resource 1: Resource{attributes 1: KeyValue{key 1,
// value 2: AnyValue{string_value 1}}...}} (opentelemetry-proto), keys in sorted order.
func encodeProcessContext(attrs map[string]string) []byte {
	keys := make([]string, 0, len(attrs))
	for k := range attrs {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var res []byte
	for _, k := range keys {
		any := appendField(nil, 1, []byte(attrs[k]))
		kv := appendField(nil, 1, []byte(k))
		kv = appendField(kv, 2, any)
		res = appendField(res, 1, kv)
	}
	return appendField(nil, 1, res)
}
