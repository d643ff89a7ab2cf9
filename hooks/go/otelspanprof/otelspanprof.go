// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)

// Package otelspanprof links OpenTelemetry traces to spanprof's span profiles: wrap your
// TracerProvider and every sampled span, while it is current on a goroutine, labels that
// goroutine's CPU samples (taken by the spanprof node agent) with its local root span's id, and
// the local root span gets the attribute pyroscope.profile.id so Grafana can open its profile.
package otelspanprof

import (
	"context"
	"encoding/hex"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	spanprof "github.com/spanprof/spanprof/hooks/go"
)

// ProfileIDKey is the span attribute Grafana uses to find a span's profile.
const ProfileIDKey = attribute.Key("pyroscope.profile.id")

// These indirections let the tests observe what reaches the hook without an agent.
var (
	setSpan     = spanprof.Set
	clearSpan   = spanprof.Clear
	agentActive = spanprof.Active
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
	ctx, s := t.Tracer.Start(ctx, name, opts...)
	sc := s.SpanContext()
	if !sc.IsSampled() {
		return ctx, s
	}
	localRoot := !parent.IsValid() || parent.IsRemote() || prev == nil
	st := &state{}
	tid, sid := sc.TraceID(), sc.SpanID()
	copy(st.span.TraceID[:], tid[:])
	copy(st.span.SpanID[:], sid[:])
	if localRoot || t.cfg.allSpans {
		st.span.SetName(name)
		s.SetAttributes(ProfileIDKey.String(hex.EncodeToString(sid[:])))
	} else {
		st.span.RootSpanID = prev.span.RootID()
		st.span.Name = prev.span.Name
	}
	setSpan(&st.span)
	return context.WithValue(ctx, stateKey{}, st), &span{Span: s, prev: prev}
}

// span restores the parent's spanprof span when it ends.
type span struct {
	trace.Span
	prev *state
}

func (s *span) End(opts ...trace.SpanEndOption) {
	s.Span.End(opts...)
	if s.prev != nil {
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
