// Package tracestore is a prompts.Store that traces every call of the
// Store it wraps with OpenTelemetry: one span a call, named Store.METHOD
// ("Store.GetActive"), a child of the span in the call's context.
//
// A span carries what names the call: ids (prompts.project.id,
// prompts.prompt.id, prompts.version.id), the prompt's key, the
// environment, the version number, the page's limit and whether a read
// asked fresh or was answered stale; and its outcome: the error's code
// (error.type, with the span's status Error for a failure of the store:
// unavailable or internal, not a client's not_found or invalid). Never a
// prompt's content, name, description, change summary, metadata or
// variables, nor an error's message (which can quote a field).
//
// The wrapper has Unwrap (see package prompts): the event log and the
// webhooks of the store it wraps are found through it, untraced (their
// calls are long waits and background polls), and a read that must be
// fresh of a version or a project goes to the store of record, past the
// wrapper, as it goes past a cache. It is a prompts.ActiveReader that
// passes the query on as it came (prompts.ReadActive), so a shared read
// stays shared.
package tracestore

import (
	"context"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"github.com/promptkit/prompts"
)

// Attribute keys of the spans. The server's request spans and package
// otelprompts use the same prompts.* names.
const (
	ProjectID     = attribute.Key("prompts.project.id")
	PromptID      = attribute.Key("prompts.prompt.id")
	PromptKey     = attribute.Key("prompts.prompt.key")
	VersionID     = attribute.Key("prompts.version.id")
	VersionNumber = attribute.Key("prompts.version.number")
	Environment   = attribute.Key("prompts.environment")
	Limit         = attribute.Key("prompts.page.limit")
	Fresh         = attribute.Key("prompts.read.fresh")
	Stale         = attribute.Key("prompts.read.stale")
	Found         = attribute.Key("prompts.page.size")
	ErrorType     = attribute.Key("error.type")
)

// Store traces the calls of the Store it wraps.
type Store struct {
	next   prompts.Store
	tracer trace.Tracer
}

var (
	_ prompts.Store        = (*Store)(nil)
	_ prompts.ActiveReader = (*Store)(nil)
)

// New returns next traced by tracers of tp.
func New(next prompts.Store, tp trace.TracerProvider) *Store {
	return &Store{next: next, tracer: tp.Tracer("github.com/promptkit/prompts/internal/tracestore")}
}

// Unwrap returns the store s wraps.
func (s *Store) Unwrap() prompts.Store { return s.next }

// start starts the span of the call name. The caller sets its attributes
// when the span records (span.IsRecording): a span the sampler dropped
// costs no attribute.
func (s *Store) start(ctx context.Context, name string) (context.Context, trace.Span) {
	return s.tracer.Start(ctx, name, internalKind...)
}

// internalKind is the option of every span, made once.
var internalKind = []trace.SpanStartOption{trace.WithSpanKind(trace.SpanKindInternal)}

// end ends span with err's code: the status Error for the store's own
// failures (unavailable, internal), an attribute only for the others.
func end(span trace.Span, err error) {
	if err != nil {
		code := prompts.ErrorCode(err)
		span.SetAttributes(ErrorType.String(string(code)))
		if code == prompts.CodeUnavailable || code == prompts.CodeInternal {
			span.SetStatus(codes.Error, string(code)) // the code, never the message
		}
	}
	span.End()
}

func env(e prompts.Environment) attribute.KeyValue { return Environment.String(string(e)) }

// activeAttrs sets, in one call, the attributes of an active prompt
// returned that its call's span does not have yet: its prompt's id when
// it was read by key, else its project's; its version's id and number;
// and more.
// The caller checks that span records.
func activeAttrs(span trace.Span, a prompts.ActivePrompt, byKey bool, more ...attribute.KeyValue) {
	kv := make([]attribute.KeyValue, 0, 3+len(more))
	if byKey {
		kv = append(kv, PromptID.String(a.ID))
	} else {
		kv = append(kv, ProjectID.String(a.ProjectID))
	}
	if v := a.ActiveVersion; v != nil {
		kv = append(kv, VersionID.String(v.ID), VersionNumber.Int(v.VersionNumber))
	}
	span.SetAttributes(append(kv, more...)...)
}

func (s *Store) CreateProject(ctx context.Context, in prompts.NewProject) (p prompts.Project, err error) {
	ctx, span := s.start(ctx, "Store.CreateProject")
	defer func() { end(span, err) }()
	p, err = s.next.CreateProject(ctx, in)
	if err == nil {
		span.SetAttributes(ProjectID.String(p.ID))
	}
	return p, err
}

func (s *Store) GetProject(ctx context.Context, id string) (p prompts.Project, err error) {
	ctx, span := s.start(ctx, "Store.GetProject")
	if span.IsRecording() {
		span.SetAttributes(ProjectID.String(id))
	}
	defer func() { end(span, err) }()
	return s.next.GetProject(ctx, id)
}

func (s *Store) ListProjects(ctx context.Context, f prompts.ProjectFilter) (page []prompts.Project, more bool, err error) {
	ctx, span := s.start(ctx, "Store.ListProjects")
	if span.IsRecording() {
		span.SetAttributes(Limit.Int(f.Limit))
	}
	defer func() { end(span, err) }()
	page, more, err = s.next.ListProjects(ctx, f)
	span.SetAttributes(Found.Int(len(page)))
	return page, more, err
}

func (s *Store) CreatePrompt(ctx context.Context, in prompts.NewPrompt) (p prompts.Prompt, err error) {
	ctx, span := s.start(ctx, "Store.CreatePrompt")
	if span.IsRecording() {
		span.SetAttributes(ProjectID.String(in.ProjectID), PromptKey.String(in.Key))
	}
	defer func() { end(span, err) }()
	p, err = s.next.CreatePrompt(ctx, in)
	if err == nil {
		span.SetAttributes(PromptID.String(p.ID))
	}
	return p, err
}

func (s *Store) GetPrompt(ctx context.Context, id string) (p prompts.Prompt, err error) {
	ctx, span := s.start(ctx, "Store.GetPrompt")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(id))
	}
	defer func() { end(span, err) }()
	p, err = s.next.GetPrompt(ctx, id)
	if err == nil {
		span.SetAttributes(ProjectID.String(p.ProjectID), PromptKey.String(p.Key))
	}
	return p, err
}

func (s *Store) UpdatePrompt(ctx context.Context, id string, in prompts.PromptUpdate) (p prompts.Prompt, err error) {
	ctx, span := s.start(ctx, "Store.UpdatePrompt")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(id))
	}
	defer func() { end(span, err) }()
	p, err = s.next.UpdatePrompt(ctx, id, in)
	if err == nil {
		span.SetAttributes(ProjectID.String(p.ProjectID), PromptKey.String(p.Key))
	}
	return p, err
}

func (s *Store) ListPrompts(ctx context.Context, f prompts.PromptFilter) (page []prompts.Prompt, more bool, err error) {
	attrs := []attribute.KeyValue{Limit.Int(f.Limit)}
	if len(f.ProjectIDs) > 0 {
		attrs = append(attrs, ProjectID.StringSlice(f.ProjectIDs))
	}
	if f.Key != "" {
		attrs = append(attrs, PromptKey.String(f.Key))
	}
	ctx, span := s.start(ctx, "Store.ListPrompts")
	if span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	defer func() { end(span, err) }()
	page, more, err = s.next.ListPrompts(ctx, f)
	span.SetAttributes(Found.Int(len(page)))
	return page, more, err
}

func (s *Store) CreateVersion(ctx context.Context, in prompts.NewVersion) (v prompts.PromptVersion, err error) {
	attrs := []attribute.KeyValue{PromptID.String(in.PromptID)}
	if len(in.Environments) > 0 {
		envs := make([]string, len(in.Environments))
		for i, e := range in.Environments {
			envs[i] = string(e)
		}
		attrs = append(attrs, Environment.StringSlice(envs))
	}
	ctx, span := s.start(ctx, "Store.CreateVersion")
	if span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	defer func() { end(span, err) }()
	v, err = s.next.CreateVersion(ctx, in)
	if err == nil {
		span.SetAttributes(VersionID.String(v.ID), VersionNumber.Int(v.VersionNumber))
	}
	return v, err
}

func (s *Store) GetVersion(ctx context.Context, promptID string, number int) (v prompts.PromptVersion, err error) {
	ctx, span := s.start(ctx, "Store.GetVersion")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(promptID), VersionNumber.Int(number))
	}
	defer func() { end(span, err) }()
	v, err = s.next.GetVersion(ctx, promptID, number)
	if err == nil {
		span.SetAttributes(VersionID.String(v.ID))
	}
	return v, err
}

func (s *Store) ListVersions(ctx context.Context, promptID string, p prompts.Page) (page []prompts.PromptVersion, more bool, err error) {
	ctx, span := s.start(ctx, "Store.ListVersions")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(promptID), Limit.Int(p.Limit))
	}
	defer func() { end(span, err) }()
	page, more, err = s.next.ListVersions(ctx, promptID, p)
	span.SetAttributes(Found.Int(len(page)))
	return page, more, err
}

func (s *Store) GetActive(ctx context.Context, promptID string, e prompts.Environment) (a prompts.ActivePrompt, err error) {
	ctx, span := s.start(ctx, "Store.GetActive")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(promptID), env(e))
	}
	defer func() { end(span, err) }()
	a, err = s.next.GetActive(ctx, promptID, e)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, false)
	}
	return a, err
}

func (s *Store) GetActiveByKey(ctx context.Context, projectID, key string, e prompts.Environment) (a prompts.ActivePrompt, err error) {
	ctx, span := s.start(ctx, "Store.GetActiveByKey")
	if span.IsRecording() {
		span.SetAttributes(ProjectID.String(projectID), PromptKey.String(key), env(e))
	}
	defer func() { end(span, err) }()
	a, err = s.next.GetActiveByKey(ctx, projectID, key, e)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, true)
	}
	return a, err
}

// ReadActive implements prompts.ActiveReader: the store's own ReadActive
// when it has one, else its GetActive or GetActiveByKey, in one span.
func (s *Store) ReadActive(ctx context.Context, q prompts.ActiveQuery) (a prompts.ActivePrompt, stale bool, err error) {
	ctx, span := s.start(ctx, "Store.ReadActive")
	if span.IsRecording() {
		if q.PromptID != "" {
			span.SetAttributes(PromptID.String(q.PromptID), env(q.Environment), Fresh.Bool(q.Fresh))
		} else {
			span.SetAttributes(ProjectID.String(q.ProjectID), PromptKey.String(q.Key), env(q.Environment), Fresh.Bool(q.Fresh))
		}
	}
	defer func() { end(span, err) }()
	a, stale, err = prompts.ReadActive(ctx, s.next, q)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, q.PromptID == "", Stale.Bool(stale))
	}
	return a, stale, err
}

func (s *Store) Activate(ctx context.Context, in prompts.Activation) (a prompts.ActivePrompt, err error) {
	attrs := []attribute.KeyValue{PromptID.String(in.PromptID), env(in.Environment)}
	if in.VersionNumber.Set {
		attrs = append(attrs, VersionNumber.Int(in.VersionNumber.Value))
	}
	if in.VersionID.Set {
		attrs = append(attrs, VersionID.String(in.VersionID.Value))
	}
	ctx, span := s.start(ctx, "Store.Activate")
	if span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	defer func() { end(span, err) }()
	a, err = s.next.Activate(ctx, in)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, false)
	}
	return a, err
}

func (s *Store) Deactivate(ctx context.Context, in prompts.Deactivation) (a prompts.ActivePrompt, err error) {
	ctx, span := s.start(ctx, "Store.Deactivate")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(in.PromptID), env(in.Environment))
	}
	defer func() { end(span, err) }()
	a, err = s.next.Deactivate(ctx, in)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, false)
	}
	return a, err
}

func (s *Store) Rollback(ctx context.Context, in prompts.Rollback) (a prompts.ActivePrompt, err error) {
	ctx, span := s.start(ctx, "Store.Rollback")
	if span.IsRecording() {
		span.SetAttributes(PromptID.String(in.PromptID), env(in.Environment))
	}
	defer func() { end(span, err) }()
	a, err = s.next.Rollback(ctx, in)
	if err == nil && span.IsRecording() {
		activeAttrs(span, a, false)
	}
	return a, err
}

func (s *Store) ListDeployments(ctx context.Context, f prompts.DeploymentFilter) (page []prompts.Deployment, more bool, err error) {
	attrs := []attribute.KeyValue{PromptID.String(f.PromptID), Limit.Int(f.Limit)}
	if f.Environment != "" {
		attrs = append(attrs, env(f.Environment))
	}
	ctx, span := s.start(ctx, "Store.ListDeployments")
	if span.IsRecording() {
		span.SetAttributes(attrs...)
	}
	defer func() { end(span, err) }()
	page, more, err = s.next.ListDeployments(ctx, f)
	span.SetAttributes(Found.Int(len(page)))
	return page, more, err
}
