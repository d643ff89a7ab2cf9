// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package otelspanprof links OpenTelemetry traces to spanprof's span profiles: wrap your
// TracerProvider and every sampled span, while it is current on a goroutine, labels that
// goroutine's CPU samples (taken by the spanprof node agent) with its local root span's id, and
// the local root span gets the attribute pyroscope.profile.id so Grafana can open its profile.
// Goroutines started inside a span carry it (through pprof labels); unsampled spans label their
// samples with span_name only.
package otelspanprof

import (
	"context"
	"encoding/hex"
	"runtime/pprof"

	"go.opentelemetry.io/otel/attribute"
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
	setSpan     = spanprof.Set
	clearSpan   = spanprof.Clear
	agentActive = spanprof.Active
	setLabels   = pprof.SetGoroutineLabels
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
func NewTracerProvider(tp trace.TracerProvider, opts ...Option) trace.TracerProvider {
	p := &tracerProvider{TracerProvider: tp}
	for _, o := range opts {
		o(&p.cfg)
	}
	return p
}

type tracerProvider struct {
	trace.TracerProvider
	cfg config
}

func (p *tracerProvider) Tracer(name string, opts ...trace.TracerOption) trace.Tracer {
	return &tracer{Tracer: p.TracerProvider.Tracer(name, opts...), cfg: p.cfg}
}

type tracer struct {
	trace.Tracer
	cfg config
}

// state is what a context carries: the spanprof span set for the span it holds.
type state struct {
	span spanprof.Span
}

type stateKey struct{}

func stateFrom(ctx context.Context) *state {
	st, _ := ctx.Value(stateKey{}).(*state)
	return st
}

func (t *tracer) Start(ctx context.Context, name string,
	opts ...trace.SpanStartOption) (context.Context, trace.Span) {
	if !agentActive() {
		// No agent: nobody could see the span, so cost nothing beyond this check. Spans that
		// start before the agent attaches stay unlabelled, as with any uprobe-based hook.
		return t.Tracer.Start(ctx, name, opts...)
	}
	parent := trace.SpanContextFromContext(ctx)
	prev := stateFrom(ctx)
	outer := ctx
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	sc := s.SpanContext()
	localRoot := !parent.IsValid() || parent.IsRemote() || prev == nil
	st := &state{}
	switch {
	case !sc.IsSampled() && !localRoot && prev != nil:
		st.span = prev.span // an unsampled child stays in its parent's profile
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
		st.span.Name = prev.span.Name
	}
	setSpan(&st.span)
	ctx = context.WithValue(ctx, stateKey{}, st)
	ctx = withSpanLabels(ctx, &st.span)
	return ctx, &span{Span: s, prev: prev, outer: outer}
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

// span restores the parent's spanprof span (and pprof labels) when it ends.
type span struct {
	trace.Span
	prev  *state
	outer context.Context
}

func (s *span) End(opts ...trace.SpanEndOption) {
	s.Span.End(opts...)
	if s.prev != nil {
		setSpan(&s.prev.span)
	} else {
		clearSpan()
	}
	setLabels(s.outer)
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
	setLabels(ctx)
}
