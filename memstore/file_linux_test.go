package memstore_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

func init() { children["emfile"] = emfileChild }

// A process that runs out of file descriptors goes on writing: only its
// compactions fail (logged once), and one succeeds once descriptors are
// back. The process is a child, whose limit of descriptors is lowered.
func TestFileStoreWritesWithNoDescriptorLeft(t *testing.T) {
	is := is.New(t)
	path := filepath.Join(t.TempDir(), "prompts.data")
	out := inChild(t, "emfile", path)
	is.True(strings.HasSuffix(out, "ok"))                        // every write succeeded, and a compaction at last
	is.Equal(strings.Count(out, "compaction failed"), 1)         // logged once
	is.True(strings.Contains(out, syscall.EMFILE.Error()))       // with its cause
	is.True(strings.Contains(out, "compaction succeeded after")) // and its end
	s, err := memstore.Open(path)
	is.NoErr(err)
	defer s.Close()
	ps, _, err := s.ListPrompts(context.Background(), prompts.PromptFilter{})
	is.NoErr(err)
	is.Equal(len(ps), 1)
	vs, _, err := s.ListVersions(context.Background(), ps[0].ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 13) // every write is in the file
}

// emfileChild writes past the journal's slack with no file descriptor
// left, then with them back; it prints its log, and "ok" when every write
// succeeded and the file was compacted only once descriptors were back.
func emfileChild(path string) int {
	fail := func(format string, args ...any) int {
		fmt.Printf(format+"\n", args...)
		return 1
	}
	ctx := context.Background()
	now := time.Date(2026, 11, 23, 12, 0, 0, 0, time.UTC)
	s, err := memstore.Open(path, memstore.WithClock(func() time.Time { return now }),
		memstore.WithLogger(slog.New(slog.NewTextHandler(os.Stdout, nil))))
	if err != nil {
		return fail("%v", err)
	}
	defer s.Close()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	if err != nil {
		return fail("%v", err)
	}
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	if err != nil {
		return fail("%v", err)
	}
	before, err := os.Stat(path)
	if err != nil {
		return fail("%v", err)
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return fail("%v", err)
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return fail("%v", err)
	}
	low := limit
	for low.Cur = uint64(len(fds)) + 1; ; low.Cur-- { // down to where no file opens
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &low); err != nil {
			return fail("%v", err)
		}
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		f.Close()
	}
	big := strings.Repeat("x", 100<<10)
	write := func() error {
		now = now.Add(2 * time.Second)
		_, err := s.CreateVersion(ctx, prompts.NewVersion{PromptID: p.ID, Content: big})
		return err
	}
	for i := range 12 { // 1.2 MiB: a compaction is due, and tried
		if err := write(); err != nil {
			return fail("write %d with no descriptor left: %v", i, err)
		}
	}
	if st, err := os.Stat(path); err != nil || !os.SameFile(st, before) {
		return fail("compacted with no descriptor left? %v", err)
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &limit); err != nil {
		return fail("%v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := write(); err != nil {
		return fail("write with descriptors back: %v", err)
	}
	if st, err := os.Stat(path); err != nil || os.SameFile(st, before) {
		return fail("not compacted with descriptors back (%v)", err)
	}
	fmt.Println("ok")
	return 0
}
