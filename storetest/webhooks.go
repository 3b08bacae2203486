package storetest

import (
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
)

// webhookStore returns the Store's webhooks; only tests of webhookTests,
// which Run leaves out for a Store that keeps none, call it.
func (s *fixture) webhookStore() prompts.WebhookStore {
	s.t.Helper()
	w, ok := prompts.WebhookStoreOf(s.Store)
	if !ok {
		s.t.Fatal("storetest: a test of webhookTests ran on a Store that keeps no webhooks (prompts.WebhookStore)")
	}
	if _, ok := prompts.EventLogOf(s.Store); !ok {
		s.t.Fatal("the Store keeps webhooks but no event log to deliver (prompts.EventLog)")
	}
	return w
}

// webhook creates a webhook of these event types (nil: all) and projects
// (nil: all).
func (s *fixture) webhook(events []prompts.EventType, projectIDs []string) prompts.Webhook {
	is := is.New(s.t)
	is.Helper()
	s.n++
	w, err := s.webhookStore().CreateWebhook(s.t.Context(), prompts.NewWebhook{
		URL:        fmt.Sprintf("https://hooks.example.com/%d?token=t", s.n),
		Events:     events,
		ProjectIDs: projectIDs,
		Secret:     prompts.NewWebhookSecret(),
	})
	is.NoErr(err) // create webhook
	return w
}

// webhookText is a webhook in one line, its secret included.
func webhookText(w prompts.Webhook) string {
	return fmt.Sprintf("%s %s events=%v projects=%v(nil %t) %s %s", w.ID, w.URL, w.Events, w.ProjectIDs, w.ProjectIDs == nil, w.Secret, w.CreatedAt.Format(time.RFC3339Nano))
}

// claim claims up to 1000 deliveries due at now, leased for a minute.
func (s *fixture) claim(now time.Time) []prompts.Delivery {
	is := is.New(s.t)
	is.Helper()
	ds, err := s.webhookStore().ClaimDeliveries(s.t.Context(), now, prompts.MaxLimit, time.Minute)
	is.NoErr(err) // claim deliveries
	return ds
}

// deliveryIDs returns the ids of the deliveries.
func deliveryIDs(ds []prompts.Delivery) []string {
	ids := make([]string, len(ds))
	for i, d := range ds {
		ids[i] = d.ID
	}
	return ids
}

// attempts lists all of a webhook's attempts, newest first, page by page.
func (s *fixture) attempts(webhookID string) []prompts.DeliveryAttempt {
	is := is.New(s.t)
	is.Helper()
	var all []prompts.DeliveryAttempt
	p := prompts.Page{Limit: 2}
	for {
		page, more, err := s.webhookStore().ListDeliveryAttempts(s.t.Context(), webhookID, p)
		is.NoErr(err) // list attempts
		all = append(all, page...)
		if !more {
			return all
		}
		is.True(len(page) > 0) // a page before more has items
		p.After = page[len(page)-1].ID
	}
}

var webhookTests = []test{
	{"a webhook is created, read, listed oldest first and deleted", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		proj := s.project()
		m := s.clock.mark()
		in := prompts.NewWebhook{URL: "https://hooks.example.com/a?token=t", Events: []prompts.EventType{prompts.EventVersionCreated, prompts.EventDeploymentCreated},
			ProjectIDs: []string{proj.ID}, Secret: prompts.NewWebhookSecret()}
		a, err := wh.CreateWebhook(ctx, in)
		is.NoErr(err)
		s.idStamped(m, a.ID)
		s.stamped(m, a.CreatedAt)
		is.Equal(a.URL, in.URL)
		is.Equal(a.Events, in.Events)
		is.Equal(a.ProjectIDs, in.ProjectIDs)
		is.Equal(a.Secret, in.Secret) // kept as it is: signing needs it
		in.Events[0], in.ProjectIDs[0] = prompts.EventPromptCreated, unknownID
		a.Events[1] = prompts.EventProjectCreated
		got, err := wh.GetWebhook(ctx, a.ID)
		is.NoErr(err)
		a.Events[1] = prompts.EventDeploymentCreated
		is.Equal(webhookText(got), webhookText(a)) // as created, whatever became of the input and the answer

		b := s.webhook(nil, nil)
		is.Equal(len(b.Events), 0)   // every type
		is.True(b.ProjectIDs == nil) // every project
		c := s.webhook(nil, nil)
		page, more, err := wh.ListWebhooks(ctx, prompts.Page{Limit: 2})
		is.NoErr(err)
		is.Equal(len(page), 2)
		is.Equal(webhookText(page[0]), webhookText(a)) // oldest first
		is.Equal(page[1].ID, b.ID)
		is.True(more)
		page, more, err = wh.ListWebhooks(ctx, prompts.Page{Limit: 2, After: b.ID})
		is.NoErr(err)
		is.Equal(len(page), 1)
		is.Equal(page[0].ID, c.ID)
		is.True(!more)
		_, _, err = wh.ListWebhooks(ctx, prompts.Page{Limit: prompts.MaxLimit + 1})
		is.True(errors.Is(err, prompts.ErrInvalid)) // the page's rules

		is.NoErr(wh.DeleteWebhook(ctx, b.ID))
		_, err = wh.GetWebhook(ctx, b.ID)
		s.notFound(err, "a deleted webhook")
		s.notFound(wh.DeleteWebhook(ctx, b.ID), "a webhook deleted twice")
		page, _, err = wh.ListWebhooks(ctx, prompts.Page{})
		is.NoErr(err)
		is.Equal(len(page), 2) // a and c
		for _, id := range append(malformedIDs(a.ID), unknownID) {
			_, err = wh.GetWebhook(ctx, id)
			s.notFound(err, id)
		}
	}},
	{"a webhook with invalid input or an unknown project is refused", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		_, err := wh.CreateWebhook(ctx, prompts.NewWebhook{URL: "ftp://example.com/", Secret: prompts.NewWebhookSecret()})
		s.invalid(err, "url")
		_, err = wh.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/", Secret: "secret"})
		s.invalid(err, "secret")
		_, err = wh.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/", ProjectIDs: []string{unknownID}, Secret: prompts.NewWebhookSecret()})
		s.notFound(err, "a webhook's unknown project")
		page, _, err := wh.ListWebhooks(ctx, prompts.Page{})
		is.NoErr(err)
		is.Equal(len(page), 0) // nothing stored
	}},
	{"each event is queued to every webhook that matches it, due at once, oldest first", func(t *testing.T, s *fixture) {
		is := is.New(t)
		a, b := s.project(), s.project() // before any webhook: delivered to none
		all := s.webhook(nil, nil)
		versions := s.webhook([]prompts.EventType{prompts.EventVersionCreated}, nil)
		onlyB := s.webhook(nil, []string{b.ID})
		both := s.webhook([]prompts.EventType{prompts.EventPromptCreated}, []string{a.ID})
		pa := s.prompt(a.ID, "k")
		s.prompt(b.ID, "k")
		s.version(pa.ID, "one", prompts.Production)
		log := s.eventsAfter(0)[2:] // the events since the webhooks
		is.Equal(len(log), 4)       // two prompts, a version, a record
		byID := map[int64]prompts.Event{}
		for _, e := range log {
			byID[e.ID] = e
		}

		ds := s.claim(s.clock.Now())
		got := map[string][]int64{}
		for _, d := range ds {
			if prev := got[d.Webhook.ID]; len(prev) > 0 {
				is.True(d.Event.ID > prev[len(prev)-1]) // oldest first, of each webhook
			}
			e, ok := byID[d.Event.ID]
			is.True(ok)                                   // an event of the log
			is.Equal(eventText(d.Event), eventText(e))    // as the log has it
			is.True(d.Event.CreatedAt.Equal(e.CreatedAt)) //
			is.True(d.QueuedAt.Equal(e.CreatedAt))        // queued with it
			is.Equal(d.Attempts, 0)                       // none yet
			w, err := s.webhookStore().GetWebhook(t.Context(), d.Webhook.ID)
			is.NoErr(err)
			is.Equal(webhookText(d.Webhook), webhookText(w)) // with its webhook, secret included
			got[d.Webhook.ID] = append(got[d.Webhook.ID], d.Event.ID)
		}
		is.Equal(got[all.ID], eventIDs(log))                                            // every event
		is.Equal(got[versions.ID], []int64{log[2].ID})                                  // the version's
		is.Equal(got[onlyB.ID], []int64{log[1].ID})                                     // b's prompt's
		is.Equal(got[both.ID], []int64{log[0].ID})                                      // a's prompt's creation
		is.Equal(len(ds), 7)                                                            // and no other
		is.Equal(len(slices.Compact(slices.Sorted(slices.Values(deliveryIDs(ds))))), 7) // each with an id of its own
	}},
	{"a claim takes the webhooks in turn, the one with the fewest deliveries leased first", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		a, b := s.project(), s.project()
		hot := s.webhook(nil, []string{a.ID})  // a receiver that hangs, say
		cold := s.webhook(nil, []string{b.ID}) // another's
		for i := range 5 {
			s.prompt(a.ID, fmt.Sprintf("k%d", i))
		}
		s.prompt(b.ID, "k0")
		s.prompt(b.ID, "k1")
		log := s.eventsAfter(0)[2:]
		hots, colds := log[:5], log[5:]
		now := s.clock.Now()
		var got []string
		for range 4 { // one at a time, as a dispatcher whose workers come free one by one claims them
			ds, err := wh.ClaimDeliveries(ctx, now, 1, time.Minute)
			is.NoErr(err)
			is.Equal(len(ds), 1)
			got = append(got, fmt.Sprintf("%s %d", ds[0].Webhook.ID, ds[0].Event.ID))
		}
		is.Equal(got, []string{
			fmt.Sprintf("%s %d", hot.ID, hots[0].ID),   // the oldest, with no leases anywhere
			fmt.Sprintf("%s %d", cold.ID, colds[0].ID), // then the webhook with none leased, though the other has older ones due
			fmt.Sprintf("%s %d", hot.ID, hots[1].ID),   // one each: the oldest
			fmt.Sprintf("%s %d", cold.ID, colds[1].ID), // and again
		})
		rest := s.claim(now)
		is.Equal(len(rest), 3)
		is.Equal([]int64{rest[0].Event.ID, rest[1].Event.ID, rest[2].Event.ID}, []int64{hots[2].ID, hots[3].ID, hots[4].ID}) // then hot's, oldest first
	}},
	{"a claim leases deliveries: none again before the lease ends, the same after it", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		s.webhook(nil, nil)
		s.project()
		s.project()
		s.project()
		now := s.clock.Now()
		first, err := wh.ClaimDeliveries(ctx, now, 2, time.Minute)
		is.NoErr(err)
		is.Equal(len(first), 2) // max
		rest := s.claim(now)
		is.Equal(len(rest), 1) // the third
		is.True(rest[0].Event.ID > first[1].Event.ID)
		is.Equal(len(s.claim(now)), 0)                     // all leased
		is.Equal(len(s.claim(now.Add(59*time.Second))), 0) // still
		again := s.claim(now.Add(2 * time.Minute))
		is.Equal(deliveryIDs(again), append(deliveryIDs(first), rest[0].ID)) // the same, oldest first, once the lease ended
		is.Equal(again[0].Attempts, 0)
		is.Equal(len(s.claim(now.Add(2*time.Minute+time.Second))), 0) // leased anew

		for _, bad := range []struct {
			now   time.Time
			max   int
			lease time.Duration
		}{{time.Time{}, 1, time.Minute}, {now, 0, time.Minute}, {now, prompts.MaxLimit + 1, time.Minute}, {now, 1, 0}} {
			_, err := wh.ClaimDeliveries(ctx, bad.now, bad.max, bad.lease)
			is.True(errors.Is(err, prompts.ErrInvalid)) // refused
		}
	}},
	{"finishing a delivery records its attempt; a delivered or failed one ends, a retried one is due again at retryAt", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		w := s.webhook(nil, nil)
		s.project()
		s.project()
		s.project()
		now := s.clock.Now()
		ds := s.claim(now)
		is.Equal(len(ds), 3)
		d1, d2, d3 := ds[0], ds[1], ds[2]
		at := now.Add(time.Second)

		err := wh.FinishDelivery(ctx, d1.ID, prompts.DeliveryAttempt{StatusCode: 42}, time.Time{})
		s.invalid(err, "status_code")
		is.Equal(len(s.attempts(w.ID)), 0) // refused: nothing recorded
		s.notFound(wh.FinishDelivery(ctx, unknownID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{}), "an unknown delivery")

		m := s.clock.mark()
		is.NoErr(wh.FinishDelivery(ctx, d1.ID, prompts.DeliveryAttempt{At: at, StatusCode: 204, Duration: 12 * time.Millisecond}, time.Time{}))            // delivered
		is.NoErr(wh.FinishDelivery(ctx, d2.ID, prompts.DeliveryAttempt{At: at, StatusCode: 503, Duration: time.Second}, now.Add(5*time.Minute)))           // retried
		is.NoErr(wh.FinishDelivery(ctx, d3.ID, prompts.DeliveryAttempt{At: at, Error: "connection refused", Duration: 3 * time.Millisecond}, time.Time{})) // failed for good
		s.notFound(wh.FinishDelivery(ctx, d1.ID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{}), "a delivery that ended")

		is.Equal(len(s.claim(now.Add(2*time.Minute))), 0) // d2 is not due yet; d1 and d3 ended
		retried := s.claim(now.Add(5 * time.Minute))
		is.Equal(deliveryIDs(retried), []string{d2.ID}) // due again
		is.Equal(retried[0].Attempts, 1)                // after one attempt
		is.Equal(retried[0].Event.ID, d2.Event.ID)
		is.NoErr(wh.FinishDelivery(ctx, d2.ID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{})) // At: the Store's clock
		is.Equal(len(s.claim(now.Add(time.Hour))), 0)                                                  // all ended

		as := s.attempts(w.ID)
		is.Equal(len(as), 4)
		type row struct {
			event   int64
			attempt int
			status  int
			err     string
			d       time.Duration
		}
		var rows []row
		for i, a := range as {
			is.Equal(a.WebhookID, w.ID)
			s.idStamped(m, a.ID)
			is.Equal(a.At.Location(), time.UTC)
			if i > 0 {
				is.True(a.ID < as[i-1].ID) // newest first
			}
			if i > 0 {
				is.True(a.At.Equal(at.UTC().Truncate(time.Microsecond))) // the time the dispatcher gave
			}
			rows = append(rows, row{a.EventID, a.Attempt, a.StatusCode, a.Error, a.Duration})
		}
		s.stamped(m, as[0].At) // none given: the Store's clock
		is.Equal(rows, []row{
			{d2.Event.ID, 2, 200, "", 0},
			{d3.Event.ID, 1, 0, "connection refused", 3 * time.Millisecond},
			{d2.Event.ID, 1, 503, "", time.Second},
			{d1.Event.ID, 1, 204, "", 12 * time.Millisecond},
		})
		_, _, err = wh.ListDeliveryAttempts(ctx, unknownID, prompts.Page{})
		s.notFound(err, "the attempts of an unknown webhook")
		_, _, err = wh.ListDeliveryAttempts(ctx, w.ID, prompts.Page{After: "nope"})
		is.True(errors.Is(err, prompts.ErrInvalid)) // the page's rules
	}},
	{"deleting a webhook drops its queued deliveries", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		wh := s.webhookStore()
		gone := s.webhook(nil, nil)
		kept := s.webhook(nil, nil)
		s.project()
		now := s.clock.Now()
		ds := s.claim(now)
		is.Equal(len(ds), 2) // one each
		is.NoErr(wh.DeleteWebhook(ctx, gone.ID))
		for _, d := range ds {
			err := wh.FinishDelivery(ctx, d.ID, prompts.DeliveryAttempt{StatusCode: 500}, now.Add(time.Minute))
			if d.Webhook.ID == gone.ID {
				s.notFound(err, "a delivery of a deleted webhook")
			} else {
				is.NoErr(err)
			}
		}
		s.project()
		later := s.claim(now.Add(time.Hour))
		is.Equal(len(later), 2) // the retry and the new event's, both to the webhook kept
		for _, d := range later {
			is.Equal(d.Webhook.ID, kept.ID)
		}
		_, _, err := wh.ListDeliveryAttempts(ctx, gone.ID, prompts.Page{})
		s.notFound(err, "the attempts of a deleted webhook")
	}},
	{"an event appended before a webhook is created is not delivered to it", func(t *testing.T, s *fixture) {
		is := is.New(t)
		s.webhookStore()
		s.project()
		s.webhook(nil, nil)
		is.Equal(len(s.claim(s.clock.Now())), 0)
		s.project()
		is.Equal(len(s.claim(s.clock.Now())), 1)
	}},
}
