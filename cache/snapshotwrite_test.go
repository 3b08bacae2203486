package cache_test

import (
	"bytes"
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/cache"
	"github.com/promptkit/prompts/memstore"
)

// writes records the writes it is given.
type writes struct {
	bytes.Buffer
	largest int
}

func (w *writes) Write(p []byte) (int, error) {
	w.largest = max(w.largest, len(p))
	return w.Buffer.Write(p)
}

// WriteSnapshot writes what MarshalJSON writes of the snapshot that
// TakeSnapshot takes, byte for byte (but for the time it was taken), a
// prompt at a time.
func TestWriteSnapshotIsTakeSnapshotsJSON(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms, proj, _ := project(t)
	taken, err := cache.TakeSnapshot(ctx, ms, proj.ID)
	is.NoErr(err)
	var w writes
	is.NoErr(cache.WriteSnapshot(ctx, &w, ms, proj.ID))
	written, err := cache.ParseSnapshot(w.Bytes())
	is.NoErr(err) // a snapshot
	is.True(!written.TakenAt.Before(taken.TakenAt))
	written.TakenAt = taken.TakenAt
	want, _ := taken.MarshalJSON()
	got, _ := written.MarshalJSON()
	is.Equal(string(got), string(want)) // the same snapshot
	again, _ := cache.Snapshot{Project: written.Project, TakenAt: written.TakenAt, Prompts: written.Prompts}.MarshalJSON()
	is.Equal(len(again), w.Len()) // in MarshalJSON's very form

	// A project with no prompt, and one with a single prompt.
	empty, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Empty"})
	is.NoErr(err)
	w.Reset()
	is.NoErr(cache.WriteSnapshot(ctx, &w, ms, empty.ID))
	s, err := cache.ParseSnapshot(w.Bytes())
	is.NoErr(err)
	is.Equal(len(s.Prompts), 0)
	p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: empty.ID, Key: "one", Name: "One"})
	is.NoErr(err)
	w.Reset()
	is.NoErr(cache.WriteSnapshot(ctx, &w, ms, empty.ID))
	s, err = cache.ParseSnapshot(w.Bytes())
	is.NoErr(err)
	is.Equal(len(s.Prompts), 1)
	is.Equal(s.Prompts[0].Prompt.ID, p.ID)

	err = cache.WriteSnapshot(ctx, &w, ms, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	is.True(errors.Is(err, prompts.ErrNotFound)) // an unknown project
}

// No write holds more than one prompt: a snapshot of 16 prompts of 64 KiB
// each comes in writes of one prompt at most.
func TestWriteSnapshotWritesAPromptAtATime(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Large"})
	is.NoErr(err)
	for i := range 16 {
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + strconv.Itoa(i), Name: "N"})
		is.NoErr(err)
		_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: strings.Repeat("x", 64<<10), Environments: []prompts.Environment{prompts.Production}})
		is.NoErr(err)
	}
	var w writes
	is.NoErr(cache.WriteSnapshot(ctx, &w, ms, proj.ID))
	is.True(w.Len() > 16*64<<10)
	is.True(w.largest < 66<<10) // one prompt, its version and its fields
	_, err = cache.ParseSnapshot(w.Bytes())
	is.NoErr(err)
}

// The bounds of TakeSnapshot hold: too many prompts before anything is
// written, too much text when the writing gets there, leaving what is not
// a snapshot.
func TestWriteSnapshotBounds(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	ms := memstore.New()
	proj, err := ms.CreateProject(ctx, prompts.NewProject{Name: "Big"})
	is.NoErr(err)
	for _, key := range []string{"small", "big"} {
		p, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: key, Name: "N"})
		is.NoErr(err)
		content := "small"
		if key == "big" {
			content = strings.Repeat("x", cache.MaxSnapshotSize/2+1)
		}
		_, err = ms.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: content, Environments: prompts.Environments})
		is.NoErr(err)
	}
	var w writes
	err = cache.WriteSnapshot(ctx, &w, ms, proj.ID)
	is.True(errors.Is(err, cache.ErrSnapshotTooLarge)) // the text, counted in each environment
	is.True(strings.Contains(err.Error(), "67108864 bytes"))
	is.True(w.Len() > 0) // the first prompt went out
	_, err = cache.ParseSnapshot(w.Bytes())
	is.True(err != nil) // not a snapshot

	proj, err = ms.CreateProject(ctx, prompts.NewProject{Name: "Many"})
	is.NoErr(err)
	for i := range cache.MaxSnapshotPrompts + 1 {
		_, err := ms.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k" + strconv.Itoa(i), Name: "N"})
		is.NoErr(err)
	}
	w.Reset()
	err = cache.WriteSnapshot(ctx, &w, ms, proj.ID)
	is.True(errors.Is(err, cache.ErrSnapshotTooLarge))
	is.True(strings.Contains(err.Error(), "more than 10000 prompts"))
	is.Equal(w.Len(), 0) // nothing written
}
