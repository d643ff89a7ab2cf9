// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

package otelspanprof

import (
	"context"
	"encoding/hex"
	"runtime/pprof"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

// recorder captures what the integration hands to the hook and to the pprof labels.
type recorder struct {
	calls  []*spanprof.Span    // nil entry: Clear
	labels []map[string]string // goroutine labels after each SetGoroutineLabels
}

func (r *recorder) install(t *testing.T) {
	setSpan = func(s *spanprof.Span) { c := *s; r.calls = append(r.calls, &c) }
	clearSpan = func() { r.calls = append(r.calls, nil) }
	agentActive = func() bool { return true }
	setLabels = func(ctx context.Context) {
		m := map[string]string{}
		pprof.ForLabels(ctx, func(k, v string) bool { m[k] = v; return true })
		r.labels = append(r.labels, m)
	}
	t.Cleanup(func() {
		setSpan, clearSpan, agentActive = spanprof.Set, spanprof.Clear, spanprof.Active
		setLabels = pprof.SetGoroutineLabels
	})
}

func newProvider(sampler sdktrace.Sampler, opts ...Option) (trace.TracerProvider,
	*tracetest.SpanRecorder) {
	rec := tracetest.NewSpanRecorder()
	sdk := sdktrace.NewTracerProvider(sdktrace.WithSampler(sampler), sdktrace.WithSpanProcessor(rec))
	return NewTracerProvider(sdk, opts...), rec
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, kv := range s.Attributes() {
		if string(kv.Key) == key {
			return kv.Value.AsString()
		}
	}
	return ""
}

func TestRootAndChildLabelWithRootID(t *testing.T) {
	var r recorder
	r.install(t)
	tp, rec := newProvider(sdktrace.AlwaysSample())
	tr := tp.Tracer("test")

	ctx, root := tr.Start(context.Background(), "GET /cart")
	_, child := tr.Start(ctx, "db.query")
	child.End()
	root.End()

	rootID := root.SpanContext().SpanID()
	childID := child.SpanContext().SpanID()
	if len(r.calls) != 4 {
		t.Fatalf("want 4 hook calls (set root, set child, restore root, clear), got %d", len(r.calls))
	}
	if r.calls[0].SpanID != rootID || r.calls[0].RootSpanID != ([8]byte{}) {
		t.Errorf("root: span id %x root %x", r.calls[0].SpanID, r.calls[0].RootSpanID)
	}
	if r.calls[1].SpanID != childID || r.calls[1].RootSpanID != rootID {
		t.Errorf("child: span id %x root %x, want %x root %x", r.calls[1].SpanID,
			r.calls[1].RootSpanID, childID, rootID)
	}
	if got := string(r.calls[1].Name[:len("GET /cart")]); got != "GET /cart" {
		t.Errorf("child carries name %q, want the root's", got)
	}
	if r.calls[2].SpanID != rootID || r.calls[3] != nil {
		t.Errorf("end did not restore the root and then clear")
	}
	ended := rec.Ended()
	if attr(ended[1], "pyroscope.profile.id") != hex.EncodeToString(rootID[:]) {
		t.Errorf("root lacks pyroscope.profile.id")
	}
	if attr(ended[0], "pyroscope.profile.id") != "" {
		t.Errorf("child has pyroscope.profile.id in root scope")
	}
}

func TestAllSpansScopeMakesEverySpanItsOwnProfile(t *testing.T) {
	var r recorder
	r.install(t)
	tp, rec := newProvider(sdktrace.AlwaysSample(), WithAllSpans())
	tr := tp.Tracer("test")

	ctx, root := tr.Start(context.Background(), "GET /cart")
	_, child := tr.Start(ctx, "db.query")
	child.End()
	root.End()

	childID := child.SpanContext().SpanID()
	if r.calls[1].SpanID != childID || r.calls[1].RootSpanID != ([8]byte{}) {
		t.Errorf("child is not its own root in all-spans scope")
	}
	if attr(rec.Ended()[0], "pyroscope.profile.id") != hex.EncodeToString(childID[:]) {
		t.Errorf("child lacks its own pyroscope.profile.id")
	}
}

func TestRemoteParentStartsALocalRoot(t *testing.T) {
	var r recorder
	r.install(t)
	tp, _ := newProvider(sdktrace.AlwaysSample())
	remote := trace.NewSpanContext(trace.SpanContextConfig{
		TraceID: trace.TraceID{1}, SpanID: trace.SpanID{2}, TraceFlags: trace.FlagsSampled,
		Remote: true,
	})
	ctx := trace.ContextWithRemoteSpanContext(context.Background(), remote)
	_, s := tp.Tracer("test").Start(ctx, "handle")
	s.End()
	if r.calls[0].RootSpanID != ([8]byte{}) || r.calls[0].TraceID != [16]byte{1} {
		t.Errorf("span under a remote parent must be a local root of the same trace")
	}
}

func TestUnsampledRootIsLabelledWithItsNameOnly(t *testing.T) {
	var r recorder
	r.install(t)
	tp, rec := newProvider(sdktrace.NeverSample())
	ctx, s := tp.Tracer("test").Start(context.Background(), "GET /health")
	_, child := tp.Tracer("test").Start(ctx, "db")
	child.End()
	s.End()
	if len(r.calls) != 4 || r.calls[0] == nil || r.calls[3] != nil {
		t.Fatalf("want set, set, restore, clear; got %d calls", len(r.calls))
	}
	if r.calls[0].SpanID != ([8]byte{}) || r.calls[0].TraceID != ([16]byte{}) ||
		string(r.calls[0].Name[:len("GET /health")]) != "GET /health" {
		t.Errorf("unsampled root: want name only, got id %x name %q", r.calls[0].SpanID,
			r.calls[0].Name[:12])
	}
	if r.calls[1].Name != r.calls[0].Name || r.calls[1].SpanID != ([8]byte{}) {
		t.Errorf("unsampled child does not stay in its root's name-only profile")
	}
	if _, has := r.labels[0]["span_id"]; has || r.labels[0]["span_name"] != "GET /health" {
		t.Errorf("pprof labels of an unsampled span: %v", r.labels[0])
	}
	if len(rec.Ended()) != 0 {
		t.Errorf("an unsampled span was recorded")
	}
}

func TestSpanLabelsAreSetForChildGoroutinesAndRestoredAtEnd(t *testing.T) {
	var r recorder
	r.install(t)
	tp, _ := newProvider(sdktrace.AlwaysSample())
	tr := tp.Tracer("test")
	ctx, root := tr.Start(context.Background(), "GET /cart")
	_, child := tr.Start(ctx, "db.query")
	child.End()
	root.End()
	rootID := root.SpanContext().SpanID()
	want := map[string]string{"span_id": hex.EncodeToString(rootID[:]), "span_name": "GET /cart"}
	if len(r.labels) != 4 {
		t.Fatalf("want 4 label updates, got %d", len(r.labels))
	}
	for i := 0; i < 3; i++ {
		if r.labels[i]["span_id"] != want["span_id"] || r.labels[i]["span_name"] != want["span_name"] {
			t.Errorf("labels[%d] = %v, want %v", i, r.labels[i], want)
		}
	}
	if len(r.labels[3]) != 0 {
		t.Errorf("root end left labels behind: %v", r.labels[3])
	}
}

func TestWithoutAgentSpansPassThroughUntouched(t *testing.T) {
	var r recorder
	r.install(t)
	agentActive = func() bool { return false }
	tp, rec := newProvider(sdktrace.AlwaysSample())
	_, s := tp.Tracer("test").Start(context.Background(), "x")
	s.End()
	if len(r.calls) != 0 || attr(rec.Ended()[0], "pyroscope.profile.id") != "" {
		t.Errorf("without an agent the integration must not touch spans")
	}
}

func TestWithoutAgentTheHookIsANoop(t *testing.T) {
	if spanprof.Active() {
		t.Skip("an agent is attached to this test binary")
	}
	s := &spanprof.Span{}
	spanprof.Set(s) // must not crash or block
	spanprof.Clear()
	if s.ABIVersion != 0 {
		t.Errorf("Set prepared the span although no agent listens")
	}
}

func TestChildOfASpanStartedBeforeTheAgentGetsNothing(t *testing.T) {
	var r recorder
	r.install(t)
	agentActive = func() bool { return false }
	tp, rec := newProvider(sdktrace.AlwaysSample())
	tr := tp.Tracer("test")
	ctx, root := tr.Start(context.Background(), "GET /slow") // in flight when the agent attaches
	agentActive = func() bool { return true }
	_, child := tr.Start(ctx, "db.query")
	child.End()
	root.End()
	if len(r.calls) != 0 {
		t.Errorf("a child of a request started before the agent reached the hook %d times", len(r.calls))
	}
	for _, s := range rec.Ended() {
		if attr(s, "pyroscope.profile.id") != "" {
			t.Errorf("%s got a profile id", s.Name())
		}
	}
}

func TestRenamedRootReachesTheNextHookCall(t *testing.T) {
	var r recorder
	r.install(t)
	tp, _ := newProvider(sdktrace.AlwaysSample())
	tr := tp.Tracer("test")
	ctx, root := tr.Start(context.Background(), "HTTP GET")
	root.SetName("GET /cart/{id}")
	_, child := tr.Start(ctx, "db.query")
	child.End()
	root.End()
	name := func(i int) string {
		n := r.calls[i].Name[:]
		for j, c := range n {
			if c == 0 {
				return string(n[:j])
			}
		}
		return string(n)
	}
	if len(r.calls) != 4 || name(0) != "HTTP GET" || name(1) != "GET /cart/{id}" ||
		name(2) != "GET /cart/{id}" || r.calls[3] != nil {
		t.Fatalf("calls: %d, names %q %q %q", len(r.calls), name(0), name(1), name(2))
	}
	// A child started after the rename passes the new name to its goroutines' pprof labels too.
	if len(r.labels) != 4 || r.labels[0]["span_name"] != "HTTP GET" ||
		r.labels[1]["span_name"] != "GET /cart/{id}" {
		t.Errorf("pprof labels after the rename: %v", r.labels)
	}
}

func TestLongNamesAreKeptTo255Bytes(t *testing.T) {
	var r recorder
	r.install(t)
	tp, _ := newProvider(sdktrace.AlwaysSample())
	long := "/api/v1/" + strings.Repeat("x", 100)
	_, s := tp.Tracer("test").Start(context.Background(), long)
	s.End()
	if got := string(r.calls[0].Name[:len(long)]); got != long || r.calls[0].Name[len(long)] != 0 {
		t.Errorf("name %q not kept whole (ABI v1 cut it at 63 bytes)", got)
	}
}

func TestTheSDKResourceIsPublishedOnceFromTheFirstSpan(t *testing.T) {
	var r recorder
	r.install(t)
	var got []map[string]string
	publishContext = func(a map[string]string) error { got = append(got, a); return nil }
	t.Cleanup(func() { publishContext = spanprof.PublishProcessContext })
	res := resource.NewSchemaless(attribute.String("service.name", "checkout"),
		attribute.String("service.namespace", "shop"), attribute.Int("pid", 7))
	sdk := sdktrace.NewTracerProvider(sdktrace.WithResource(res))
	tr := NewTracerProvider(sdk).Tracer("test")
	for i := 0; i < 3; i++ {
		_, s := tr.Start(context.Background(), "GET /cart")
		s.End()
	}
	if len(got) != 1 || got[0]["service.name"] != "checkout" || got[0]["service.namespace"] != "shop" ||
		len(got[0]) != 2 {
		t.Fatalf("published %v", got)
	}
}

// The otelgrpc way: the span is ended through the context (trace.SpanFromContext(ctx).End()),
// never through the span Start returned. The goroutine must leave the span all the same, once.
func TestSpanEndedThroughItsContextRestoresTheGoroutine(t *testing.T) {
	for _, tc := range []struct {
		name    string
		sampler sdktrace.Sampler
		hide    bool // the provider is not the SDK's: no span processor can be registered
	}{
		{"sampled", sdktrace.AlwaysSample(), false},
		{"unsampled", sdktrace.NeverSample(), false},
		{"sampled, provider without processors", sdktrace.AlwaysSample(), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var r recorder
			r.install(t)
			var tp trace.TracerProvider = sdktrace.NewTracerProvider(sdktrace.WithSampler(tc.sampler))
			if tc.hide {
				tp = struct{ trace.TracerProvider }{tp}
			}
			tr := NewTracerProvider(tp).Tracer("test")
			base := pprof.WithLabels(context.Background(), pprof.Labels("tenant", "t1"))
			ctx, root := tr.Start(base, "rpc")
			cctx, _ := tr.Start(ctx, "db")
			trace.SpanFromContext(cctx).End()
			trace.SpanFromContext(ctx).End()
			root.End() // a second End changes nothing
			if len(r.calls) != 4 || r.calls[2] == nil || r.calls[3] != nil {
				t.Fatalf("want set, set, restore, clear; got %d calls", len(r.calls))
			}
			last := r.labels[len(r.labels)-1]
			if _, has := last[SpanNameLabel]; has || last["tenant"] != "t1" {
				t.Errorf("labels after the end: %v, want the caller's", last)
			}
		})
	}
}

func TestBindReturnsItsUnbind(t *testing.T) {
	var r recorder
	r.install(t)
	tp, _ := newProvider(sdktrace.AlwaysSample())
	ctx, root := tp.Tracer("test").Start(
		pprof.WithLabels(context.Background(), pprof.Labels("tenant", "t1")), "job")
	defer root.End()
	n := len(r.calls)
	unbind := Bind(ctx)
	if len(r.calls) != n+1 || r.calls[n] == nil ||
		r.calls[n].SpanID != root.SpanContext().SpanID() {
		t.Fatalf("Bind did not set the span")
	}
	unbind()
	if len(r.calls) != n+2 || r.calls[n+1] != nil {
		t.Fatalf("unbind did not clear the span")
	}
	last := r.labels[len(r.labels)-1]
	if _, has := last[SpanIDLabel]; has || last["tenant"] != "t1" {
		t.Errorf("labels after unbind: %v, want the context's without the span", last)
	}
}
