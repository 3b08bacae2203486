package prompts_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

func TestEventFilterValidate(t *testing.T) {
	is := is.New(t)
	is.NoErr(prompts.EventFilter{}.Validate())
	is.NoErr(prompts.EventFilter{After: 42, Limit: 1000}.Validate())
	for _, f := range []prompts.EventFilter{{After: -1}, {Limit: -1}, {Limit: 1001}} {
		is.True(errors.Is(f.Validate(), prompts.ErrInvalid)) // refused
	}
	is.Equal(prompts.EventFilter{}.Size(), prompts.DefaultLimit)
	is.True(prompts.EventFilter{}.Keeps("p"))                        // nil keeps all
	is.True(!prompts.EventFilter{ProjectIDs: []string{}}.Keeps("p")) // empty keeps none
	is.True(prompts.EventFilter{ProjectIDs: []string{"a", "p"}}.Keeps("p"))
}

func TestNewWebhookValidate(t *testing.T) {
	is := is.New(t)
	secret := prompts.NewWebhookSecret()
	is.True(strings.HasPrefix(secret, "whsec_"))
	is.True(secret != prompts.NewWebhookSecret()) // random
	ok := prompts.NewWebhook{URL: "https://hooks.example.com/prompts?t=1", Events: []prompts.EventType{prompts.EventVersionCreated}, Secret: secret}
	is.NoErr(ok.Validate())
	for name, tc := range map[string]struct {
		mutate func(*prompts.NewWebhook)
		field  string
	}{
		"no url":       {func(w *prompts.NewWebhook) { w.URL = "" }, "url"},
		"relative url": {func(w *prompts.NewWebhook) { w.URL = "/hook" }, "url"},
		"ftp":          {func(w *prompts.NewWebhook) { w.URL = "ftp://example.com/x" }, "url"},
		"no host":      {func(w *prompts.NewWebhook) { w.URL = "https:///x" }, "url"},
		"user info":    {func(w *prompts.NewWebhook) { w.URL = "https://u:p@example.com/" }, "url"},
		"fragment":     {func(w *prompts.NewWebhook) { w.URL = "https://example.com/#x" }, "url"},
		"long url":     {func(w *prompts.NewWebhook) { w.URL = "https://example.com/" + strings.Repeat("x", 2048) }, "url"},
		"unknown type": {func(w *prompts.NewWebhook) { w.Events = []prompts.EventType{"prompt.deleted"} }, "events"},
		"type twice":   {func(w *prompts.NewWebhook) { w.Events = []prompts.EventType{"prompt.created", "prompt.created"} }, "events"},
		"bad project":  {func(w *prompts.NewWebhook) { w.ProjectIDs = []string{"nope"} }, "project_ids"},
		"bad secret":   {func(w *prompts.NewWebhook) { w.Secret = "secret" }, "secret"},
		"short secret": {func(w *prompts.NewWebhook) { w.Secret = "whsec_AAAA" }, "secret"},
		"not base64":   {func(w *prompts.NewWebhook) { w.Secret = "whsec_!!!!" }, "secret"},
	} {
		in := ok
		tc.mutate(&in)
		err := in.Validate()
		var e *prompts.Error
		if !errors.As(err, &e) || e.Code != prompts.CodeInvalid || e.Fields[0].Field != tc.field {
			t.Errorf("%s: got %v, want an invalid %s", name, err, tc.field)
		}
	}
}

func TestWebhookMatches(t *testing.T) {
	is := is.New(t)
	e := prompts.Event{Type: prompts.EventVersionCreated, ProjectID: "p1"}
	is.True(prompts.Webhook{}.Matches(e)) // every type, every project
	is.True(prompts.Webhook{Events: []prompts.EventType{prompts.EventVersionCreated}}.Matches(e))
	is.True(!prompts.Webhook{Events: []prompts.EventType{prompts.EventPromptCreated}}.Matches(e))
	is.True(prompts.Webhook{ProjectIDs: []string{"p1"}}.Matches(e))
	is.True(!prompts.Webhook{ProjectIDs: []string{"p2"}}.Matches(e))
}

func TestDeliveryAttemptValidate(t *testing.T) {
	is := is.New(t)
	is.NoErr(prompts.DeliveryAttempt{}.Validate())                                       // no answer
	is.NoErr(prompts.DeliveryAttempt{StatusCode: 204, Duration: time.Second}.Validate()) // an answer
	for _, a := range []prompts.DeliveryAttempt{{StatusCode: 99}, {StatusCode: 600}, {StatusCode: -1}, {Duration: -1}} {
		is.True(errors.Is(a.Validate(), prompts.ErrInvalid)) // refused
	}
}

func TestValidateClaim(t *testing.T) {
	is := is.New(t)
	now := time.Now()
	is.NoErr(prompts.ValidateClaim(now, 1, time.Second))
	is.NoErr(prompts.ValidateClaim(now, prompts.MaxLimit, time.Second))
	for name, err := range map[string]error{
		"no time":     prompts.ValidateClaim(time.Time{}, 1, time.Second),
		"max 0":       prompts.ValidateClaim(now, 0, time.Second),
		"max 1001":    prompts.ValidateClaim(now, prompts.MaxLimit+1, time.Second),
		"no lease":    prompts.ValidateClaim(now, 1, 0),
		"a lease < 0": prompts.ValidateClaim(now, 1, -time.Second),
	} {
		if !errors.Is(err, prompts.ErrInvalid) {
			t.Errorf("%s: got %v, want ErrInvalid", name, err)
		}
	}
}
