package cache

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/promptkit/prompts"
)

// WriteSnapshot writes to w the snapshot of a project that TakeSnapshot
// would take, as MarshalJSON writes it, a prompt at a time as it reads
// them: it holds the ids of the project's prompts and one prompt with its
// versions, never the whole snapshot, so that a server answers many
// readers of a large snapshot in little memory.
//
// An unknown project (prompts.ErrNotFound), one with more than
// MaxSnapshotPrompts prompts (ErrSnapshotTooLarge) and a failure of the
// store while it lists the prompts are returned before anything is
// written. A project whose text passes MaxSnapshotSize, found as the
// writing gets there, is ErrSnapshotTooLarge, and a later failure of the
// store is returned as it is: w then holds an unfinished document, which
// is not JSON, and which the caller must not pass on as a snapshot (a
// server cuts the answer short). An error of w is returned as it is.
func WriteSnapshot(ctx context.Context, w io.Writer, store prompts.Store, projectID string) error {
	project, err := store.GetProject(ctx, projectID)
	if err != nil {
		return err
	}
	takenAt := time.Now().UTC().Truncate(time.Microsecond)
	ids, err := snapshotIDs(ctx, store, projectID)
	if err != nil {
		return err
	}
	list, err := store.ListEnvironments(ctx, projectID)
	if err != nil {
		return err
	}
	envs := prompts.EnvironmentNames(list)
	// The document is MarshalJSON's: its head, with an empty list of
	// prompts ("prompts":[]}), less the list's end, then each prompt as
	// it is in a snapshot of that prompt alone, then the end.
	head, _ := Snapshot{Project: project, TakenAt: takenAt, Environments: envs}.MarshalJSON()
	if !bytes.HasSuffix(head, []byte("[]}")) {
		return fmt.Errorf("cache: a snapshot's JSON does not end with its prompts: %.40q", head[max(0, len(head)-40):])
	}
	head = head[:len(head)-2]
	if _, err := w.Write(head); err != nil {
		return err
	}
	var size int64
	for i, id := range ids {
		sp, err := snapshotPrompt(ctx, store, id, envs)
		if err != nil {
			return err
		}
		if size += snapshotSize(sp); size > MaxSnapshotSize {
			return fmt.Errorf("%w: its text passes %d bytes", ErrSnapshotTooLarge, MaxSnapshotSize)
		}
		one, _ := Snapshot{Project: project, TakenAt: takenAt, Environments: envs, Prompts: []SnapshotPrompt{sp}}.MarshalJSON()
		if !bytes.HasPrefix(one, head) {
			return errors.New("cache: a snapshot's JSON does not start alike for one prompt and for none")
		}
		item := one[len(head)-1 : len(one)-2] // "," and the prompt
		if i == 0 {
			item = item[1:]
		} else {
			item[0] = ','
		}
		if _, err := w.Write(item); err != nil {
			return err
		}
	}
	_, err = w.Write([]byte("]}"))
	return err
}

// snapshotIDs returns the ids of the project's prompts, oldest first, or
// ErrSnapshotTooLarge past MaxSnapshotPrompts.
func snapshotIDs(ctx context.Context, store prompts.Store, projectID string) ([]string, error) {
	var ids []string
	f := prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	for {
		page, more, err := store.ListPrompts(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, p := range page {
			ids = append(ids, p.ID)
		}
		if len(ids) > MaxSnapshotPrompts {
			return nil, fmt.Errorf("%w: it has more than %d prompts", ErrSnapshotTooLarge, MaxSnapshotPrompts)
		}
		if !more || len(page) == 0 {
			return ids, nil
		}
		f.After = page[len(page)-1].ID
	}
}
