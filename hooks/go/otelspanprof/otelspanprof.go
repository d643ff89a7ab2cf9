// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package otelspanprof links OpenTelemetry traces to spanprof's span profiles: wrap your
// TracerProvider and every sampled span, while it is current on a goroutine, labels that
// goroutine's CPU samples (taken by the spanprof node agent) with its local root span's id, and
// the local root span gets the attribute pyroscope.profile.id so Grafana can open its profile.
package otelspanprof

import (
	"context"
	"encoding/hex"
	"sync/atomic"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

// ProfileIDKey is the span attribute Grafana uses to find a span's profile.
const ProfileIDKey = attribute.Key("pyroscope.profile.id")

// These indirections let the tests observe what reaches the hook without an agent.
var (
	setSpan        = spanprof.Set
	clearSpan      = spanprof.Clear
	agentActive    = spanprof.Active
	publishContext = spanprof.PublishProcessContext
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
func NewTracerProvider(tp trace.TracerProvider, opts ...Option) trace.TracerProvider {
	p := &tracerProvider{TracerProvider: tp, published: new(atomic.Bool)}
	for _, o := range opts {
		o(&p.cfg)
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
}

func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), cfg: p.cfg,
		published: p.published}
}

type tracer struct {
	trace.Tracer
	cfg       config
	published *atomic.Bool
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
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	t.publishFrom(s)
	sc := s.SpanContext()
	if !sc.IsSampled() {
		return ctx, s
	}
	localRoot := !parent.IsValid() || parent.IsRemote()
	if !localRoot && prev == nil && !t.cfg.allSpans {
		// A local parent this wrapper never labelled: it started before the agent attached.
		// As in Pyroscope's integrations, such a span is no local root and gets nothing.
		return ctx, s
	}
	st := &state{}
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(st.span.TraceID[:], tid[:])
	copy(st.span.SpanID[:], sid[:])
	if localRoot || t.cfg.allSpans {
		st.span.SetName(name)
		s.SetAttributes(ProfileIDKey.String(hex.EncodeToString(sid[:])))
	} else {
		st.span.RootSpanID = prev.span.RootID()
		st.root = prev.root
		if st.root == nil {
			st.root = prev
		}
		st.span.Name = st.root.span.Name
	}
	setSpan(&st.span)
	return context.WithValue(ctx, stateKey{}, st), &span{Span: s, prev: prev, st: st}
}

// span restores the parent's spanprof span when it ends, and follows renames of a local root.
type span struct {
	trace.Span
	prev *state
	st   *state
}

// SetName renames the span. A local root's new name reaches spanprof at the next hook call
// of its trace on this goroutine (a child starting or ending), as in the Python and Ruby
// integrations: the goroutine may be inside a child right now, so it is not set here.
func (s *span) SetName(name string) {
	s.Span.SetName(name)
	if s.st.span.RootSpanID == ([8]byte{}) {
		s.st.span.SetName(name)
	}
}

func (s *span) End(opts ...trace.SpanEndOption) {
	s.Span.End(opts...)
	if s.prev != nil {
		if s.prev.root != nil { // the root may have been renamed since the parent started
			s.prev.span.Name = s.prev.root.span.Name
		}
		setSpan(&s.prev.span)
	} else {
		clearSpan()
	}
}

// Bind sets, on the calling goroutine, the span ctx carries. Call it first thing in a goroutine
// that continues a span started elsewhere: spans follow goroutines, and Go does not tell anyone
// when a goroutine starts.
func Bind(ctx context.Context) {
	if st := stateFrom(ctx); st != nil {
		setSpan(&st.span)
	} else {
		clearSpan()
	}
}
