package storetest

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/matryer/is"
	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/api"
)

// eventLog returns the Store's event log, or skips the test when the Store
// keeps none.
func (s *fixture) eventLog() prompts.EventLog {
	s.t.Helper()
	l, ok := prompts.EventLogOf(s.Store)
	if !ok {
		s.t.Skip("the Store keeps no event log (prompts.EventLog)")
	}
	return l
}

// eventsAfter reads every event after the id after, page by page.
func (s *fixture) eventsAfter(after int64) []prompts.Event {
	is := is.New(s.t)
	is.Helper()
	var all []prompts.Event
	for {
		page, more, err := s.eventLog().ListEvents(s.t.Context(), prompts.EventFilter{After: after, Limit: prompts.MaxLimit})
		is.NoErr(err) // list events
		all = append(all, page...)
		if !more {
			return all
		}
		is.True(len(page) > 0) // a page before more has items
		after = page[len(page)-1].ID
	}
}

// lastEvent returns the log's newest id.
func (s *fixture) lastEvent() int64 {
	is := is.New(s.t)
	is.Helper()
	id, err := s.eventLog().LastEventID(s.t.Context())
	is.NoErr(err) // last event id
	return id
}

// follow returns the events appended since the last call (since the
// start for the first), checking that their ids increase past *last, and
// moves *last on.
func (s *fixture) follow(last *int64) []prompts.Event {
	is := is.New(s.t)
	is.Helper()
	evs := s.eventsAfter(*last)
	for _, e := range evs {
		is.True(e.ID > *last) // ids increase in the log's order
		*last = e.ID
	}
	is.Equal(s.lastEvent(), *last) // LastEventID is the newest
	return evs
}

// eventText is an event in one line, without its id and time: its type,
// project, prompt and data, the data as the interface writes it (a
// project as the list of projects, a prompt with its revision, a version
// with its change summary, a deployment record as the history).
func eventText(e prompts.Event) string {
	set := 0
	var data string
	if e.Project != nil {
		set++
		data = projectText(*e.Project)
	}
	if e.Prompt != nil {
		set++
		data = promptText(*e.Prompt)
	}
	if e.Version != nil {
		set++
		data = versionText(*e.Version)
	}
	if e.Deployment != nil {
		set++
		data = deploymentText(*e.Deployment)
	}
	if set != 1 {
		data = fmt.Sprintf("%d resources", set)
	}
	return fmt.Sprintf("%s project=%s prompt=%s %s", e.Type, e.ProjectID, e.PromptID, data)
}

func deploymentText(d prompts.Deployment) string { return text(api.FromDeployment(d)) }

// eventTexts is eventText of each event.
func eventTexts(evs []prompts.Event) []string {
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = eventText(e)
	}
	return out
}

// Expected events, as eventText writes them, made from what the reads
// answer.
func projectEvent(p prompts.Project) string {
	return eventText(prompts.Event{Type: prompts.EventProjectCreated, ProjectID: p.ID, Project: &p})
}

func promptEvent(t prompts.EventType, p prompts.Prompt) string {
	return eventText(prompts.Event{Type: t, ProjectID: p.ProjectID, PromptID: p.ID, Prompt: &p})
}

func versionEvent(projectID string, v prompts.PromptVersion) string {
	return eventText(prompts.Event{Type: prompts.EventVersionCreated, ProjectID: projectID, PromptID: v.PromptID, Version: &v})
}

func deploymentEvent(projectID string, d prompts.Deployment) string {
	return eventText(prompts.Event{Type: prompts.EventDeploymentCreated, ProjectID: projectID, PromptID: d.PromptID, Deployment: &d})
}

// readPrompt, readVersion and newestRecords answer what the reads answer now.
func (s *fixture) readPrompt(id string) prompts.Prompt {
	is := is.New(s.t)
	is.Helper()
	p, err := s.GetPrompt(s.t.Context(), id)
	is.NoErr(err) // get prompt
	return p
}

func (s *fixture) readVersion(promptID string, n int) prompts.PromptVersion {
	is := is.New(s.t)
	is.Helper()
	v, err := s.GetVersion(s.t.Context(), promptID, n)
	is.NoErr(err) // get version
	return v
}

// newestRecords returns the prompt's n newest deployment records, oldest
// first: the order of their events.
func (s *fixture) newestRecords(promptID string, n int) []prompts.Deployment {
	is := is.New(s.t)
	is.Helper()
	ds, _, err := s.ListDeployments(s.t.Context(), prompts.DeploymentFilter{PromptID: promptID, Page: prompts.Page{Limit: n}})
	is.NoErr(err) // list deployments
	is.Equal(len(ds), n)
	for i, j := 0, len(ds)-1; i < j; i, j = i+1, j-1 {
		ds[i], ds[j] = ds[j], ds[i]
	}
	return ds
}

// failAfter is how long a test waits for what should come at once: a
// bound for a failure, never a pause that orders things.
const failAfter = time.Minute

// waitAtOnce is WaitEvents for a wait that must end at once (events
// follow after), bounded by failAfter so that a Store that waits fails
// instead of hanging the suite.
func (s *fixture) waitAtOnce(l prompts.EventLog, after int64) error {
	ctx, cancel := context.WithTimeout(s.t.Context(), failAfter)
	defer cancel()
	return l.WaitEvents(ctx, after)
}

var eventTests = []test{
	{"every change appends its event, with the resource as its read answers it right after", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		s.eventLog()
		var last int64
		is.Equal(s.lastEvent(), int64(0)) // an empty store has no event

		m := s.clock.mark()
		proj := s.project()
		got, err := s.GetProject(ctx, proj.ID)
		is.NoErr(err)
		evs := s.follow(&last)
		is.Equal(eventTexts(evs), []string{projectEvent(got)}) // project.created
		is.True(evs[0].ID > 0)                                 // ids are positive
		is.Equal(evs[0].PromptID, "")                          // a project's event names no prompt
		s.stamped(m, evs[0].CreatedAt)

		m = s.clock.mark()
		p := s.prompt(proj.ID, "k")
		evs = s.follow(&last)
		is.Equal(eventTexts(evs), []string{promptEvent(prompts.EventPromptCreated, s.eventPrompt(s.readPrompt(p.ID)))}) // prompt.created
		s.stamped(m, evs[0].CreatedAt)

		m = s.clock.mark()
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some("Renamed"), Description: prompts.Some("about")})
		is.NoErr(err)
		evs = s.follow(&last)
		is.Equal(eventTexts(evs), []string{promptEvent(prompts.EventPromptUpdated, s.eventPrompt(s.readPrompt(p.ID)))}) // prompt.updated
		s.stamped(m, evs[0].CreatedAt)

		m = s.clock.mark()
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hello {{name}}", ChangeSummary: ptr("first"), Metadata: `{"a":1.0}`})
		is.NoErr(err)
		evs = s.follow(&last)
		is.Equal(eventTexts(evs), []string{versionEvent(proj.ID, s.readVersion(p.ID, 1))}) // version.created
		s.stamped(m, evs[0].CreatedAt)

		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{name}}", Environments: []prompts.Environment{prompts.Production, prompts.Staging}, Actor: "ci"})
		is.NoErr(err)
		ds := s.newestRecords(p.ID, 2)
		is.Equal(eventTexts(s.follow(&last)), []string{ // the version first, then one event per record
			versionEvent(proj.ID, s.readVersion(p.ID, 2)),
			deploymentEvent(proj.ID, ds[0]),
			deploymentEvent(proj.ID, ds[1]),
		})

		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1), Change: prompts.Change{Actor: "ann", Reason: "back"}})
		is.NoErr(err)
		is.Equal(eventTexts(s.follow(&last)), []string{deploymentEvent(proj.ID, s.newestRecords(p.ID, 1)[0])}) // activate
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Staging))
		is.Equal(eventTexts(s.follow(&last)), []string{deploymentEvent(proj.ID, s.newestRecords(p.ID, 1)[0])}) // deactivate
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Production})
		is.NoErr(err)
		is.Equal(eventTexts(s.follow(&last)), []string{deploymentEvent(proj.ID, s.newestRecords(p.ID, 1)[0])}) // rollback

		all := s.eventsAfter(0) // the whole log, oldest first
		is.Equal(len(all), 10)
		for i := 1; i < len(all); i++ {
			is.True(all[i].ID > all[i-1].ID) // ids increase
		}
		for _, e := range all {
			is.Equal(e.CreatedAt.Location(), time.UTC) // in UTC
		}
	}},
	{"a call that changes nothing appends nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		s.eventLog()
		p := s.prompt(s.project().ID, "k")
		s.version(p.ID, "one", prompts.Production)
		last := s.lastEvent()
		_, err := s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{})
		is.NoErr(err) // the zero update
		_, err = s.UpdatePrompt(ctx, p.ID, prompts.PromptUpdate{Name: prompts.Some(p.Name), Key: prompts.Some(p.Key)})
		is.NoErr(err) // the values the prompt has
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Production, VersionNumber: prompts.Some(1)})
		is.NoErr(err)                                      // the version already active
		is.NoErr(s.deactivate(ctx, p.ID, prompts.Staging)) // where nothing is active
		is.Equal(s.lastEvent(), last)                      // no event
		is.Equal(len(s.eventsAfter(last)), 0)
	}},
	{"a refused or failed call appends nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		s.eventLog()
		proj := s.project()
		p := s.prompt(proj.ID, "k")
		s.version(p.ID, "Hello {{name}}", prompts.Production)
		last := s.lastEvent()
		_, err := s.CreateProject(ctx, prompts.NewProject{Name: ""})
		is.True(errors.Is(err, prompts.ErrInvalid)) // invalid
		_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Other", Slug: proj.Slug})
		is.True(errors.Is(err, prompts.ErrConflict)) // slug taken
		_, err = s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: unknownID, Key: "x", Name: "X"})
		is.True(errors.Is(err, prompts.ErrNotFound)) // unknown project
		_, err = s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
		is.True(errors.Is(err, prompts.ErrConflict)) // key taken
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: unknownID, Content: "c"})
		is.True(errors.Is(err, prompts.ErrNotFound)) // unknown prompt
		_, err = s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "Hi {{other}}", Environments: []prompts.Environment{prompts.Production}})
		is.True(errors.Is(err, prompts.ErrVariablesChanged)) // the promotion guard
		_, err = s.Activate(ctx, prompts.Activation{PromptID: p.ID, Environment: prompts.Staging, VersionNumber: prompts.Some(1), Change: prompts.Change{IfRevision: 1}})
		is.True(errors.Is(err, prompts.ErrPreconditionFailed)) // another revision
		_, err = s.Rollback(ctx, prompts.Rollback{PromptID: p.ID, Environment: prompts.Staging})
		is.True(errors.Is(err, prompts.ErrConflict)) // nothing to roll back
		_, err = s.UpdatePrompt(cancelled(t), p.ID, prompts.PromptUpdate{Name: prompts.Some("New")})
		is.True(errors.Is(err, context.Canceled)) // ctx ended
		is.Equal(s.lastEvent(), last)             // no event
		is.Equal(len(s.eventsAfter(last)), 0)
	}},
	{"a write repeated with its idempotency appends nothing", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		s.eventLog()
		proj := s.project()
		pin := prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K", Idempotency: idem("prompt", "req")}
		p, err := s.CreatePrompt(ctx, pin)
		is.NoErr(err)
		vin := prompts.NewVersion{PromptID: p.ID, Content: "c", Environments: []prompts.Environment{prompts.Production}, Idempotency: idem("version", "req")}
		_, err = s.CreateVersion(ctx, vin)
		is.NoErr(err)
		s.version(p.ID, "d", prompts.Production)
		rin := prompts.Rollback{PromptID: p.ID, Environment: prompts.Production, Idempotency: idem("rollback", "req")}
		_, err = s.Rollback(ctx, rin)
		is.NoErr(err)
		last := s.lastEvent()
		again, err := s.CreatePrompt(ctx, pin)
		is.NoErr(err)
		is.True(again.Replayed)
		v, err := s.CreateVersion(ctx, vin)
		is.NoErr(err)
		is.True(v.Replayed)
		a, err := s.Rollback(ctx, rin)
		is.NoErr(err)
		is.True(a.Replayed)
		is.Equal(s.lastEvent(), last) // the replays appended nothing
		is.Equal(len(s.eventsAfter(last)), 0)
	}},
	{"the log is paged by Limit and After, oldest first, with more", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		for range 5 {
			s.project()
		}
		all := s.eventsAfter(0)
		is.Equal(len(all), 5)
		page, more, err := l.ListEvents(ctx, prompts.EventFilter{Limit: 2})
		is.NoErr(err)
		is.Equal(eventIDs(page), eventIDs(all[:2])) // the oldest two
		is.True(more)
		page, more, err = l.ListEvents(ctx, prompts.EventFilter{Limit: 2, After: page[1].ID})
		is.NoErr(err)
		is.Equal(eventIDs(page), eventIDs(all[2:4])) // the next two
		is.True(more)
		page, more, err = l.ListEvents(ctx, prompts.EventFilter{Limit: 2, After: page[1].ID})
		is.NoErr(err)
		is.Equal(eventIDs(page), eventIDs(all[4:])) // the last
		is.True(!more)
		page, more, err = l.ListEvents(ctx, prompts.EventFilter{Limit: 3, After: all[1].ID})
		is.NoErr(err)
		is.Equal(eventIDs(page), eventIDs(all[2:])) // exactly the rest
		is.True(!more)                              // and no more
		page, more, err = l.ListEvents(ctx, prompts.EventFilter{After: all[4].ID})
		is.NoErr(err)
		is.Equal(len(page), 0) // after the newest: nothing yet
		is.True(!more)
		page, _, err = l.ListEvents(ctx, prompts.EventFilter{After: all[4].ID + 1000})
		is.NoErr(err)
		is.Equal(len(page), 0) // after an id to come: nothing
		page, _, err = l.ListEvents(ctx, prompts.EventFilter{})
		is.NoErr(err)
		is.Equal(len(page), 5) // the default limit holds them all
		for _, f := range []prompts.EventFilter{{After: -1}, {Limit: -1}, {Limit: prompts.MaxLimit + 1}} {
			_, _, err = l.ListEvents(ctx, f)
			is.True(errors.Is(err, prompts.ErrInvalid)) // refused
		}
	}},
	{"ProjectIDs keeps the events of those projects", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		a, b := s.project(), s.project()
		pa := s.prompt(a.ID, "k")
		pb := s.prompt(b.ID, "k")
		s.version(pa.ID, "one", prompts.Production)
		s.version(pb.ID, "one")
		s.version(pa.ID, "two")
		list := func(f prompts.EventFilter) []string {
			t.Helper()
			var projects []string
			for {
				page, more, err := l.ListEvents(ctx, f)
				is.NoErr(err)
				for _, e := range page {
					projects = append(projects, e.ProjectID)
				}
				if !more {
					return projects
				}
				is.True(len(page) > 0) // a page before more has items
				f.After = page[len(page)-1].ID
			}
		}
		aa := []string{a.ID, a.ID, a.ID, a.ID, a.ID}
		is.Equal(list(prompts.EventFilter{ProjectIDs: []string{a.ID}}), aa)                                   // a's: project, prompt, version, record, version
		is.Equal(list(prompts.EventFilter{ProjectIDs: []string{a.ID}, Limit: 1}), aa)                         // a page at a time
		is.Equal(list(prompts.EventFilter{ProjectIDs: []string{b.ID}, Limit: 2}), []string{b.ID, b.ID, b.ID}) // b's
		is.Equal(len(list(prompts.EventFilter{ProjectIDs: []string{a.ID, b.ID, unknownID}})), 8)              // both
		is.Equal(len(list(prompts.EventFilter{ProjectIDs: []string{}})), 0)                                   // an empty list keeps none
		is.Equal(len(list(prompts.EventFilter{ProjectIDs: []string{unknownID}})), 0)                          // an unknown project has none
		page, more, err := l.ListEvents(ctx, prompts.EventFilter{ProjectIDs: []string{b.ID}, Limit: 3})
		is.NoErr(err)
		is.Equal(len(page), 3) // b's three
		is.True(!more)         // and no more of b's, though one of a's follows
		_, more, err = l.ListEvents(ctx, prompts.EventFilter{ProjectIDs: []string{a.ID}, Limit: 4})
		is.NoErr(err)
		is.True(more) // one of a's follows
		bCreated := s.eventsAfter(0)[3]
		is.Equal(bCreated.PromptID, pb.ID)
		is.Equal(len(list(prompts.EventFilter{ProjectIDs: []string{a.ID}, After: bCreated.ID})), 3) // after an event of another project
	}},
	{"ProjectIDs reads the events of several projects in log order, page by page, also after the retention removed some", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		projects := []string{s.project().ID, s.project().ID, s.project().ID}
		var promptIDs []string
		for _, p := range projects {
			promptIDs = append(promptIDs, s.prompt(p, "k").ID)
		}
		// Events of the three projects, interleaved unevenly: the third
		// writes most, the first least.
		write := func() {
			for i := range 9 {
				s.version(promptIDs[2], fmt.Sprint("c", i))
				if i%3 == 0 {
					s.version(promptIDs[1], fmt.Sprint("b", i), prompts.Staging)
				}
				if i == 4 {
					s.version(promptIDs[0], fmt.Sprint("a", i))
				}
			}
		}
		write()
		// check compares every filtered read, page by page, with the
		// whole log filtered here.
		check := func() {
			t.Helper()
			all := s.eventsAfter(0)
			for _, pick := range [][]int{{0}, {1}, {2}, {0, 1}, {2, 0}, {1, 2, 1, 1}} {
				var ids []string
				for _, i := range pick {
					ids = append(ids, projects[i])
				}
				keep := prompts.EventFilter{ProjectIDs: ids}
				for _, after := range []int64{0, all[len(all)/2].ID} {
					var want []int64
					for _, e := range all {
						if e.ID > after && keep.Keeps(e.ProjectID) {
							want = append(want, e.ID)
						}
					}
					for _, limit := range []int{1, 2, 3, 0} {
						f := prompts.EventFilter{After: after, ProjectIDs: ids, Limit: limit}
						var got []int64
						for {
							page, more, err := l.ListEvents(ctx, f)
							is.NoErr(err)
							is.True(len(page) <= f.Size()) // a page holds at most the limit
							got = append(got, eventIDs(page)...)
							if !more {
								break
							}
							is.Equal(len(page), f.Size()) // a page before more is full
							f.After = page[len(page)-1].ID
						}
						is.Equal(got, want) // those projects' events, in log order, each once
					}
				}
			}
		}
		check()
		first := s.eventsAfter(0)[0].ID
		s.clock.jump(prompts.DefaultEventRetention + time.Hour)
		write() // removes the first events, of every project
		_, _, err := l.ListEvents(ctx, prompts.EventFilter{After: first, ProjectIDs: projects[:1]})
		is.True(errors.Is(err, prompts.ErrEventsExpired)) // the first are gone
		check()
	}},
	{"events past the retention are removed, and reading after one of them is ErrEventsExpired", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		s.project()
		s.project()
		first := s.eventsAfter(0)
		s.clock.jump(prompts.DefaultEventRetention - time.Hour)
		s.project() // kept: younger than the retention at the end
		s.clock.jump(2 * time.Hour)
		s.project() // a later write removes the first two
		kept := s.eventsAfter(0)
		is.Equal(len(kept), 2) // 0 reads from the oldest kept
		is.True(kept[0].ID > first[1].ID)
		_, _, err := l.ListEvents(ctx, prompts.EventFilter{After: first[0].ID})
		is.True(errors.Is(err, prompts.ErrEventsExpired)) // the event after it is gone
		_, _, err = l.ListEvents(ctx, prompts.EventFilter{After: first[0].ID, ProjectIDs: []string{unknownID}})
		is.True(errors.Is(err, prompts.ErrEventsExpired)) // whatever the filter
		page, _, err := l.ListEvents(ctx, prompts.EventFilter{After: first[1].ID})
		is.NoErr(err)                            // nothing after it is gone
		is.Equal(eventIDs(page), eventIDs(kept)) // and all that follows is there
		is.Equal(s.lastEvent(), kept[1].ID)      // the newest
		is.NoErr(s.waitAtOnce(l, first[0].ID))   // events follow
		is.Equal(eventIDs(s.eventsAfter(kept[0].ID)), eventIDs(kept[1:]))
	}},
	{"WaitEvents returns at once when events follow, when one is appended, and when ctx ends", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		s.project()
		is.NoErr(s.waitAtOnce(l, 0)) // an event follows 0

		// An append from another goroutine ends the wait, a few times over
		// so that the wait most likely starts before the append at least
		// once. WaitEvents may return early (the caller lists again); the
		// deadline is for a failure only.
		waited := make(chan error, 1)
		for range 5 {
			last := s.lastEvent()
			waiting := make(chan struct{})
			go func() {
				ctx, cancel := context.WithTimeout(ctx, failAfter)
				defer cancel()
				close(waiting)
				for {
					if err := l.WaitEvents(ctx, last); err != nil {
						waited <- err
						return
					}
					id, err := l.LastEventID(ctx)
					if err != nil || id > last {
						waited <- err
						return
					}
				}
			}()
			<-waiting
			s.project()
			is.NoErr(<-waited) // woken by the append
		}

		// ctx ending ends the wait, with ctx's error.
		last := s.lastEvent()
		wctx, cancel := context.WithCancel(ctx)
		go func() {
			for {
				if err := l.WaitEvents(wctx, last); err != nil {
					waited <- err
					return
				}
			}
		}()
		cancel()
		select {
		case err := <-waited:
			is.True(errors.Is(err, context.Canceled))       // ctx's error
			is.True(errors.Is(err, prompts.ErrUnavailable)) // wrapped as the Store's are
		case <-time.After(failAfter):
			t.Fatal("WaitEvents did not return when its context ended")
		}
		err := l.WaitEvents(wctx, last)
		is.True(errors.Is(err, context.Canceled)) // an ended ctx: at once
		err = l.WaitEvents(ctx, -1)
		is.True(errors.Is(err, prompts.ErrInvalid)) // not an id
	}},
	{"concurrent writers append events with unique increasing ids, none lost, none seen out of order", func(t *testing.T, s *fixture) {
		is := is.New(t)
		ctx := t.Context()
		l := s.eventLog()
		proj := s.project()
		start := s.lastEvent()
		const writers, versions = 8, 4
		var wg sync.WaitGroup
		errs := make(chan error, writers)
		for w := range writers {
			wg.Go(func() {
				p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + strconv.Itoa(w), Name: "K"})
				if err != nil {
					errs <- err
					return
				}
				for i := range versions {
					envs := []prompts.Environment{prompts.Production}
					if i%2 == 1 {
						envs = nil
					}
					if _, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: "c" + strconv.Itoa(i), Environments: envs}); err != nil {
						errs <- err
						return
					}
				}
			})
		}
		// A reader follows the log as it grows: what it sees, page by page
		// after the last id it saw, must be the whole log at the end.
		done := make(chan struct{})
		followed := make(chan []prompts.Event, 1)
		go func() {
			var seen []prompts.Event
			after := start
			for {
				finished := false
				select {
				case <-done:
					finished = true // read to the end once more
				default:
				}
				page, more, err := l.ListEvents(ctx, prompts.EventFilter{After: after, Limit: 3})
				if err != nil {
					t.Errorf("following the log: %v", err)
					followed <- seen
					return
				}
				seen = append(seen, page...)
				if len(page) > 0 {
					after = page[len(page)-1].ID
				}
				if finished && !more {
					followed <- seen
					return
				}
			}
		}()
		wg.Wait()
		close(done)
		close(errs)
		for err := range errs {
			is.NoErr(err) // every write succeeded
		}
		all := s.eventsAfter(start)
		is.Equal(len(all), writers*(1+versions+versions/2)) // a prompt, its versions, and a record for half of them
		for i := 1; i < len(all); i++ {
			is.True(all[i].ID > all[i-1].ID) // unique, increasing
		}
		is.Equal(eventIDs(<-followed), eventIDs(all)) // the follower missed none
		// The events of each prompt come in the order of its changes.
		next := map[string]int{}
		for _, e := range all {
			switch e.Type {
			case prompts.EventPromptCreated:
				is.Equal(next[e.PromptID], 0) // the prompt first
				next[e.PromptID] = 1
			case prompts.EventVersionCreated:
				is.Equal(e.Version.VersionNumber, next[e.PromptID]) // versions in order
				next[e.PromptID]++
			case prompts.EventDeploymentCreated:
				is.Equal(*e.Deployment.VersionNumber, next[e.PromptID]-1) // a record after its version
			default:
				t.Errorf("unexpected event %s", e.Type)
			}
		}
	}},
	{"changing a returned event changes nothing stored", func(t *testing.T, s *fixture) {
		is := is.New(t)
		s.eventLog()
		p, err := s.CreatePrompt(t.Context(), prompts.NewPrompt{ProjectID: s.project().ID, Key: "k", Name: "K", Description: ptr("d")})
		is.NoErr(err)
		_, err = s.CreateVersion(t.Context(), prompts.NewVersion{PromptID: p.ID, Content: "Hi {{a}}", ChangeSummary: ptr("s"), Environments: []prompts.Environment{prompts.Production}, Actor: "ann"})
		is.NoErr(err)
		before := eventTexts(s.eventsAfter(0))
		for _, e := range s.eventsAfter(0) {
			switch {
			case e.Project != nil:
				e.Project.Name = "changed"
			case e.Prompt != nil:
				e.Prompt.Name = "changed"
				*e.Prompt.Description = "changed"
			case e.Version != nil:
				*e.Version.ChangeSummary = "changed"
				e.Version.Variables[0] = "changed"
			case e.Deployment != nil:
				*e.Deployment.Actor = "changed"
				*e.Deployment.VersionNumber = 42
			}
		}
		is.Equal(eventTexts(s.eventsAfter(0)), before) // as it was
	}},
}

// eventIDs returns the ids of the events.
func eventIDs(evs []prompts.Event) []int64 {
	ids := make([]int64, len(evs))
	for i, e := range evs {
		ids[i] = e.ID
	}
	return ids
}
