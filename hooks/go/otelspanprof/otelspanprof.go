// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package otelspanprof links OpenTelemetry traces to spanprof's span profiles: wrap your
// TracerProvider and every sampled span, while it is current on a goroutine, labels that
// goroutine's CPU samples (taken by the spanprof node agent) with its local root span's id, and
// the local root span gets the attribute pyroscope.profile.id so Grafana can open its profile.
// Goroutines started inside a span carry it (through pprof labels); unsampled spans label their
// samples with span_name only. A span stops labelling its goroutine when it ends, however it is
// ended: through the span this package returns, or through trace.SpanFromContext(ctx).End() as
// instrumentation libraries such as otelgrpc do.
package otelspanprof

import (
	"context"
	"encoding/hex"
	"runtime/pprof"
	"sync"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

// ProfileIDKey is the span attribute Grafana uses to find a span's profile.
const ProfileIDKey = attribute.Key("pyroscope.profile.id")

// The pprof label keys Grafana's otel-profiling-go sets, which the agent reads.
const (
	SpanIDLabel   = "span_id"
	SpanNameLabel = "span_name"
)

// These indirections let the tests observe what reaches the hook without an agent.
var (
	setSpan        = spanprof.Set
	clearSpan      = spanprof.Clear
	agentActive    = spanprof.Active
	publishContext = spanprof.PublishProcessContext
	setLabels      = pprof.SetGoroutineLabels
)

type config struct {
	allSpans bool
}

// Option configures NewTracerProvider.
type Option func(*config)

// WithAllSpans makes every sampled span its own profile: each gets pyroscope.profile.id and
// labels its own samples. By default only local root spans do (Pyroscope's convention).
func WithAllSpans() Option {
	return func(c *config) { c.allSpans = true }
}

// NewTracerProvider wraps tp so that its tracers report span changes to spanprof.
// The SDK's resource is published as OpenTelemetry process context (OTEP 4719) from the first
// recording span, so the agent names the profiles after the resource's service.name, as the
// traces are. Call PublishResource to do it before any span starts.
//
// When tp is the OpenTelemetry SDK's provider (anything with RegisterSpanProcessor), a span
// processor is registered on it that sees every recording span end, however End is reached
// (the SDK calls it on the goroutine that ends the span); other spans carry this package's span
// in their context, so that trace.SpanFromContext(ctx).End() reaches it.
func NewTracerProvider(tp trace.TracerProvider, opts ...Option) trace.TracerProvider {
	p := &tracerProvider{TracerProvider: tp, published: new(atomic.Bool)}
	for _, o := range opts {
		o(&p.cfg)
	}
	if r, ok := tp.(interface{ RegisterSpanProcessor(sdktrace.SpanProcessor) }); ok {
		p.ends = &endWatcher{}
		r.RegisterSpanProcessor(p.ends)
	}
	return p
}

// PublishResource publishes res's attributes (string values; others are left out) as
// OpenTelemetry process context, where the spanprof agent reads the service name.
func PublishResource(res *resource.Resource) error {
	attrs := map[string]string{}
	for it := res.Iter(); it.Next(); {
		if kv := it.Attribute(); kv.Value.Type() == attribute.STRING {
			attrs[string(kv.Key)] = kv.Value.AsString()
		}
	}
	return publishContext(attrs)
}

type tracerProvider struct {
	trace.TracerProvider
	cfg       config
	published *atomic.Bool // the resource went out as process context
	ends      *endWatcher  // nil: tp has no span processors
}

func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), cfg: p.cfg,
		published: p.published, ends: p.ends}
}

type tracer struct {
	trace.Tracer
	cfg       config
	published *atomic.Bool
	ends      *endWatcher
}

// spanKey names a recording span for the end watcher.
type spanKey struct {
	trace trace.TraceID
	span  trace.SpanID
}

// endWatcher is a span processor: at the end of a recording span this package labelled, it
// restores the goroutine's labels, whichever way End was called. Spans never ended stay in the
// map, as they would stay unexported.
type endWatcher struct {
	live sync.Map // spanKey -> *span
}

func (w *endWatcher) OnStart(context.Context, sdktrace.ReadWriteSpan) {}
func (w *endWatcher) Shutdown(context.Context) error                   { return nil }
func (w *endWatcher) ForceFlush(context.Context) error                 { return nil }

func (w *endWatcher) OnEnd(s sdktrace.ReadOnlySpan) {
	sc := s.SpanContext()
	if v, ok := w.live.LoadAndDelete(spanKey{sc.TraceID(), sc.SpanID()}); ok {
		v.(*span).restore()
	}
}

// publishFrom publishes the resource of the SDK's span once (one atomic load after that).
func (t *tracer) publishFrom(s trace.Span) {
	if t.published.Load() {
		return
	}
	if ro, ok := s.(interface{ Resource() *resource.Resource }); ok && ro.Resource() != nil &&
		t.published.CompareAndSwap(false, true) {
		_ = PublishResource(ro.Resource()) // best effort: the environment still names it
	}
}

// state is what a context carries: the spanprof span set for the span it holds, and for a
// child, its local root's state (whose name it carries).
type state struct {
	span spanprof.Span
	root *state
}

type stateKey struct{}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

func (t *tracer) Start(ctx context.Context, name string,
	opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !agentActive() {
		// No agent: nobody could see the span, so cost nothing beyond this check (and the
		// one-time resource publication). Spans that start before the agent attaches stay
		// unlabelled, as with any uprobe-based hook.
		ctx, s := t.Tracer.Start(ctx, name, opts...)
		t.publishFrom(s)
		return ctx, s
	}
	parent := trace.SpanContextFromContext(ctx)
	prev := stateFrom(ctx)
	outer := ctx
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	t.publishFrom(s)
	sc := s.SpanContext()
	localRoot := !parent.IsValid() || parent.IsRemote()
	if !localRoot && prev == nil && !t.cfg.allSpans {
		// A local parent this wrapper never labelled: it started before the agent attached.
		// As in Pyroscope's integrations, such a span is no local root and gets nothing.
		return ctx, s
	}
	st := &state{}
	switch {
	case !sc.IsSampled() && !localRoot && prev != nil:
		st.root = rootOf(prev)
		st.span = prev.span // an unsampled child stays in its parent's profile
		st.span.Name = st.root.span.Name
	case !sc.IsSampled():
		// Unsampled: labelled with its name only (no span id), as otel-profiling-go does, so
		// per-name views count all CPU while no trace links to it.
		st.span.SetName(name)
	case localRoot || t.cfg.allSpans:
		tid, sid := sc.TraceID(), sc.SpanID()
		copy(st.span.TraceID[:], tid[:])
		copy(st.span.SpanID[:], sid[:])
		st.span.SetName(name)
		s.SetAttributes(ProfileIDKey.String(hex.EncodeToString(sid[:])))
	default:
		tid, sid := sc.TraceID(), sc.SpanID()
		copy(st.span.TraceID[:], tid[:])
		copy(st.span.SpanID[:], sid[:])
		st.span.RootSpanID = prev.span.RootID()
		st.root = rootOf(prev)
		st.span.Name = st.root.span.Name
	}
	setSpan(&st.span)
	sp := &span{Span: s, prev: prev, st: st, outer: outer}
	if t.ends != nil && s.IsRecording() {
		t.ends.live.Store(spanKey{sc.TraceID(), sc.SpanID()}, sp)
		sp.ends = t.ends
	} else {
		// No processor will see this span end (unsampled, or not the SDK's provider): the
		// context carries this span, so ending the context's span ends it here too.
		ctx = trace.ContextWithSpan(ctx, sp)
	}
	ctx = context.WithValue(ctx, stateKey{}, st)
	ctx = withSpanLabels(ctx, &st.span)
	return ctx, sp
}

// rootOf is the state of prev's local root (prev itself when it is one).
func rootOf(prev *state) *state {
	if prev.root != nil {
		return prev.root
	}
	return prev
}

// withSpanLabels also records the span in the goroutine's pprof labels (span_id of its local
// root and span_name, the keys otel-profiling-go uses). The runtime copies a goroutine's labels
// to every goroutine it starts, which is how goroutines started inside a span inherit it.
func withSpanLabels(ctx context.Context, s *spanprof.Span) context.Context {
	name := s.Name[:]
	for i, c := range name {
		if c == 0 {
			name = name[:i]
			break
		}
	}
	var set pprof.LabelSet
	if root := s.RootID(); root != ([8]byte{}) {
		set = pprof.Labels(SpanIDLabel, hex.EncodeToString(root[:]), SpanNameLabel, string(name))
	} else {
		set = pprof.Labels(SpanNameLabel, string(name))
	}
	ctx = pprof.WithLabels(ctx, set)
	setLabels(ctx)
	return ctx
}

// span restores the parent's spanprof span (and pprof labels) when it ends, and follows renames
// of a local root.
type span struct {
	trace.Span
	prev  *state
	st    *state
	outer context.Context
	ends  *endWatcher // the watcher that holds it while it is live; nil: none does
	done  atomic.Bool // restored once, by End or by the end watcher, whichever comes first
}

// SetName renames the span. A local root's new name reaches spanprof at the next hook call
// of its trace on this goroutine (a child starting or ending), as in the Python and Ruby
// integrations: the goroutine may be inside a child right now, so it is not set here. The
// pprof labels of goroutines started before the rename keep the start name.
func (s *span) SetName(name string) {
	s.Span.SetName(name)
	if s.st.root == nil {
		s.st.span.SetName(name)
	}
}

func (s *span) End(opts ...trace.SpanEndOption) {
	s.Span.End(opts...) // a recording span's end reaches the watcher, which restores
	s.restore()
}

// restore puts the goroutine that ends the span back in the parent's span (or in none), once.
func (s *span) restore() {
	if !s.done.CompareAndSwap(false, true) {
		return
	}
	if s.ends != nil {
		sc := s.Span.SpanContext()
		s.ends.live.Delete(spanKey{sc.TraceID(), sc.SpanID()})
	}
	if s.prev != nil {
		if s.prev.root != nil { // the root may have been renamed since the parent started
			s.prev.span.Name = s.prev.root.span.Name
		}
		setSpan(&s.prev.span)
	} else {
		clearSpan()
	}
	setLabels(s.outer)
}

// Bind sets, on the calling goroutine, the span ctx carries, and returns the function that
// takes it off again (the goroutine is then in no span, with ctx's other pprof labels):
//
//	defer otelspanprof.Bind(ctx)()
//
// Call it first thing in a goroutine that continues a span started elsewhere (a worker pool,
// say): spans follow goroutines, and Go does not tell anyone when a goroutine starts. A goroutine
// that exits while bound takes its span with it: the agent never gives it to a later goroutine.
func Bind(ctx context.Context) (unbind func()) {
	if st := stateFrom(ctx); st != nil {
		setSpan(&st.span)
	} else {
		clearSpan()
	}
	setLabels(ctx)
	return func() {
		clearSpan()
		setLabels(withoutSpanLabels(ctx))
	}
}

// withoutSpanLabels is a context with ctx's pprof labels but span_id and span_name.
func withoutSpanLabels(ctx context.Context) context.Context {
	var rest []string
	pprof.ForLabels(ctx, func(k, v string) bool {
		if k != SpanIDLabel && k != SpanNameLabel {
			rest = append(rest, k, v)
		}
		return true
	})
	return pprof.WithLabels(context.Background(), pprof.Labels(rest...))
}
