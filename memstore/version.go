package memstore

import (
	"context"
	"slices"

	"github.com/promptkit/prompts"
)

// CreateVersion implements prompts.Store.
func (s *Store) CreateVersion(ctx context.Context, in prompts.NewVersion) (prompts.PromptVersion, error) {
	if err := begin(ctx, in.Validate()); err != nil {
		return prompts.PromptVersion{}, err
	}
	md := in.Metadata.Normalize()
	// Before the lock when the format is given: it reads the whole
	// content and compiles the front matter's schemas.
	var given prompts.Signature
	var givenPartials []string
	if in.TemplateFormat != "" {
		var err error
		if given, err = prompts.VersionSignature(in.TemplateFormat, in.Content, md); err != nil {
			return prompts.PromptVersion{}, err
		}
		if givenPartials, err = prompts.TemplatePartials(in.TemplateFormat, in.Content); err != nil {
			return prompts.PromptVersion{}, err
		}
	}
	return write(s, opCreateVersion, in.Idempotency, func() (prompts.PromptVersion, error) {
		rec, ok := s.prompts[in.PromptID]
		if !ok {
			return prompts.PromptVersion{}, prompts.NotFound("prompt")
		}
		format, sig, partials := in.TemplateFormat, given, givenPartials
		if format == "" {
			format = prompts.FormatPlain // a prompt's first version
			if n := len(rec.versions); n > 0 {
				format = rec.versions[n-1].TemplateFormat.Or(prompts.FormatPlain)
			}
			var err error
			if sig, err = prompts.VersionSignature(format, in.Content, md); err != nil {
				return prompts.PromptVersion{}, err
			}
			if partials, err = prompts.TemplatePartials(format, in.Content); err != nil {
				return prompts.PromptVersion{}, err
			}
		}
		for _, e := range in.Environments {
			if err := s.changeable(rec, e, "environments", in.AllowProtected); err != nil {
				return prompts.PromptVersion{}, err
			}
		}
		for _, e := range in.Environments {
			if err := s.partialGuard(rec, e, partials, in.AllowMissingPartials); err != nil {
				return prompts.PromptVersion{}, err // before anything changes
			}
			if err := rec.guard(e, sig, in.AllowVariableChange); err != nil {
				return prompts.PromptVersion{}, err // before anything changes
			}
		}
		now := s.clock.Now()
		v := prompts.PromptVersion{
			ID:             prompts.NewIDAfter(now, rec.p.LatestVersionID),
			PromptID:       rec.p.ID,
			VersionNumber:  len(rec.versions) + 1,
			Content:        in.Content,
			ChangeSummary:  copyString(in.ChangeSummary),
			Metadata:       md,
			CreatedAt:      now,
			TemplateFormat: format,
			Variables:      sig.Variables,
			Partials:       partials,
		}
		rec.versions = append(rec.versions, v)
		rec.inputs = append(rec.inputs, sig.Inputs)
		rec.p.LatestVersionID = v.ID
		rec.p.Revision = prompts.NextRevision(rec.p.Revision, now)
		ev := v.Copy()
		s.emit(prompts.Event{Type: prompts.EventVersionCreated, ProjectID: rec.p.ProjectID, PromptID: rec.p.ID, CreatedAt: now, Version: &ev})
		for _, e := range in.Environments {
			s.point(rec, e, pointer{n: v.VersionNumber}, prompts.ActionActivate, prompts.Change{Actor: in.Actor, Reason: in.Reason}, now)
		}
		return v.Copy(), nil
	})
}

// GetVersion implements prompts.Store.
func (s *Store) GetVersion(ctx context.Context, promptID string, number int) (prompts.PromptVersion, error) {
	if err := s.rlock(ctx, nil); err != nil {
		return prompts.PromptVersion{}, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return prompts.PromptVersion{}, prompts.NotFound("prompt")
	}
	if number < 1 || number > len(rec.versions) {
		return prompts.PromptVersion{}, prompts.NotFound("version")
	}
	return rec.versions[number-1].Copy(), nil
}

// ListVersions implements prompts.Store.
func (s *Store) ListVersions(ctx context.Context, promptID string, p prompts.Page) ([]prompts.PromptVersion, bool, error) {
	if err := s.rlock(ctx, p.Validate()); err != nil {
		return nil, false, err
	}
	defer s.mu.RUnlock()
	rec, ok := s.prompts[promptID]
	if !ok {
		return nil, false, prompts.NotFound("prompt")
	}
	// Newest first: walk down from the newest version older than After.
	// Version ids increase with numbers, so that is a binary search.
	end := len(rec.versions)
	if p.After != "" {
		end, _ = slices.BinarySearchFunc(rec.versions, p.After, func(v prompts.PromptVersion, id string) int {
			switch {
			case v.ID < id:
				return -1
			case v.ID > id:
				return 1
			}
			return 0
		})
	}
	n := min(end, p.Size())
	out := make([]prompts.PromptVersion, 0, n)
	for i := end - 1; i >= end-n; i-- {
		out = append(out, rec.versions[i].Copy())
	}
	return out, end > n, nil
}
