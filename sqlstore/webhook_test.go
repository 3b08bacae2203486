package sqlstore_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lib/pq"
	"github.com/matryer/is"

	"github.com/promptkit/prompts"
)

// TestClaimDeliveriesAcrossProcesses: processes, each with several
// goroutines, claim the same due deliveries at once, a few at a time, and
// finish each one they get. Each delivery is handed to one of them only,
// and each gets one attempt.
func TestClaimDeliveriesAcrossProcesses(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	w, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	other, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/other", Events: []prompts.EventType{prompts.EventProjectCreated}, Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	const events = 100
	for i := range events {
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: fmt.Sprintf("P%d", i)})
		is.NoErr(err) // an event for each webhook
	}

	const processes, claimers = 4, 4
	outs := runChildren(t, "claims", s.Schema(), "", processes, claimers, nil)
	claimed := map[string]int{}
	total := 0
	for _, out := range outs {
		for _, id := range strings.Fields(out) {
			claimed[id]++
			total++
		}
	}
	is.Equal(total, 2*events) // every delivery was claimed
	for id, n := range claimed {
		if n != 1 {
			t.Errorf("delivery %s was claimed %d times", id, n)
		}
	}
	for _, wh := range []string{w.ID, other.ID} {
		as := attempts(t, s, wh)
		is.Equal(len(as), events) // one attempt each
		seen := map[int64]bool{}
		for _, a := range as {
			is.Equal(a.Attempt, 1)
			is.True(!seen[a.EventID]) // of an event of its own
			seen[a.EventID] = true
		}
	}
	left, err := s.ClaimDeliveries(ctx, time.Now().Add(time.Hour), prompts.MaxLimit, time.Minute)
	is.NoErr(err)
	is.Equal(len(left), 0) // all delivered
}

// runClaimsChild is a process of TestClaimDeliveriesAcrossProcesses: its
// goroutines claim 3 deliveries at a time until none is left, finish each
// as delivered, and print the ids they got.
func runClaimsChild() int {
	s, claimers, closeAll, err := openChild()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	defer closeAll()
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		ids    []string
		failed bool
	)
	ctx := context.Background()
	for range claimers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				ds, err := s.ClaimDeliveries(ctx, time.Now(), 3, time.Minute)
				if err == nil && len(ds) == 0 {
					return
				}
				for _, d := range ds {
					if err == nil {
						err = s.FinishDelivery(ctx, d.ID, prompts.DeliveryAttempt{StatusCode: 204}, time.Time{})
					}
				}
				mu.Lock()
				for _, d := range ds {
					ids = append(ids, d.ID)
				}
				if err != nil {
					fmt.Fprintln(os.Stderr, err)
					failed = true
				}
				mu.Unlock()
				if err != nil {
					return
				}
			}
		}()
	}
	wg.Wait()
	if failed {
		return 1
	}
	fmt.Println(strings.Join(ids, "\n"))
	return 0
}

// TestWriteWhileAWebhookIsDeleted: a write whose event matches a webhook
// that another transaction is deleting neither waits for that transaction
// nor fails; the delivery it queues is never claimed.
func TestWriteWhileAWebhookIsDeleted(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	w, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	other := database(t).MustBegin()
	defer other.Rollback() //nolint:errcheck // a no-op once committed
	other.MustExec(`DELETE FROM `+pq.QuoteIdentifier(s.Schema())+`.webhooks WHERE id = $1`, w.ID)

	quick, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, err = s.CreateProject(quick, prompts.NewProject{Name: "P"})
	is.NoErr(err) // not blocked by the delete under way
	is.NoErr(other.Commit())
	ds, err := s.ClaimDeliveries(ctx, time.Now().Add(time.Minute), prompts.MaxLimit, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 0) // the webhook is gone: nothing to deliver
}

// TestDeliveryIDs: a delivery's id is a ULID of its queue time; other
// ids are not found.
func TestDeliveryIDs(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	_, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://example.com/hook", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	ds, err := s.ClaimDeliveries(ctx, time.Now(), 1, time.Minute)
	is.NoErr(err)
	is.Equal(len(ds), 1)
	d := ds[0]
	is.True(prompts.ValidID(d.ID))                                                                            // a ULID
	is.Equal(d.ID[:10], prompts.NewID(d.QueuedAt)[:10])                                                       // of its queue time
	for _, id := range []string{"", "x", strings.ToLower(d.ID), d.ID[:25] + "Z", prompts.NewID(time.Now())} { // none of those is it
		err := s.FinishDelivery(ctx, id, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{})
		is.True(prompts.ErrorCode(err) == prompts.CodeNotFound)
	}
	is.NoErr(s.FinishDelivery(ctx, d.ID, prompts.DeliveryAttempt{StatusCode: 200}, time.Time{})) // it is
}

// TestAttemptRowsAreSmall: an attempt of a receiver that never answers
// costs one row of delivery_attempts, under 512 bytes with the longest
// error the dispatcher keeps (160 bytes), and changes its delivery's row
// in place of adding one.
func TestAttemptRowsAreSmall(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	s := newSQLStore(t)
	q := pq.QuoteIdentifier(s.Schema())
	_, err := s.CreateWebhook(ctx, prompts.NewWebhook{URL: "https://hooks.example.com/a/rather/long/path?token=0123456789abcdef0123456789abcdef", Secret: prompts.NewWebhookSecret()})
	is.NoErr(err)
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	now := time.Now()
	for i := range 10 {
		ds, err := s.ClaimDeliveries(ctx, now, 1, 30*time.Second)
		is.NoErr(err)
		is.Equal(len(ds), 1)
		is.NoErr(s.FinishDelivery(ctx, ds[0].ID, prompts.DeliveryAttempt{At: now, Error: strings.Repeat("e", 160), Duration: 10 * time.Second}, now))
		var rows, deliveries, widest int
		is.NoErr(database(t).QueryRowContext(ctx, `SELECT count(*), max(pg_column_size(a.*)) FROM `+q+`.delivery_attempts a`).Scan(&rows, &widest))
		is.NoErr(database(t).QueryRowContext(ctx, `SELECT count(*) FROM `+q+`.deliveries`).Scan(&deliveries))
		is.Equal(rows, i+1)     // one row an attempt
		is.Equal(deliveries, 1) // the delivery, one row still
		is.True(widest < 512)   // each small
		if i == 0 {
			t.Logf("an attempt's row: %d bytes", widest)
		}
	}
}
