//go:build unix

package memstore_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/memstore"
)

// A directory that any user may write, without the sticky bit, is
// refused with a message naming it and why; with the sticky bit (as /tmp
// has), it is accepted.
func TestFileStoreRefusesAWorldWritableDirectory(t *testing.T) {
	is := is.New(t)
	dir := filepath.Join(t.TempDir(), "shared")
	is.NoErr(os.Mkdir(dir, 0o700))
	is.NoErr(os.Chmod(dir, 0o777))
	path := filepath.Join(dir, "prompts.data")
	_, err := memstore.Open(path)
	is.True(err != nil)                                // refused
	is.True(strings.Contains(err.Error(), dir))        // naming the directory
	is.True(strings.Contains(err.Error(), "any user")) // and why
	_, err = os.Lstat(path)
	is.True(os.IsNotExist(err)) // nothing created

	is.NoErr(os.Chmod(dir, 0o777|os.ModeSticky))
	s, err := memstore.Open(path)
	is.NoErr(err) // sticky, as /tmp: accepted
	is.NoErr(s.Close())

	// A link's directory counts too: whoever may write it may change
	// where the link points.
	is.NoErr(os.Chmod(dir, 0o777))
	own := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.Symlink(own, filepath.Join(dir, "link")))
	_, err = memstore.Open(filepath.Join(dir, "link"))
	is.True(err != nil && strings.Contains(err.Error(), dir)) // refused

	// So does a directory above: whoever may write it may move the
	// directory below and put one of theirs in its place.
	sub := filepath.Join(dir, "private")
	is.NoErr(os.Mkdir(sub, 0o700))
	_, err = memstore.Open(filepath.Join(sub, "prompts.data"))
	is.True(err != nil && strings.Contains(err.Error(), dir) && strings.Contains(err.Error(), "above")) // refused, naming it
}

// Removing the lock file by hand lets no second Open write the file: the
// lock is on the data file itself. flock belongs to an open file, so two
// Opens in one process exclude each other as two processes do.
func TestFileStoreLockSurvivesARemovedLockFile(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	defer s.Close()
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	os.Remove(path + ".lock") // as an operator might, or a tidy-up script
	_, err = memstore.Open(path)
	is.True(err != nil)                              // refused in this process
	is.True(strings.Contains(err.Error(), "in use")) // saying why
	out := inChild(t, "open", path)
	is.True(strings.Contains(out, "in use")) // and in another
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Q"})
	is.NoErr(err) // the first writes on

	is.NoErr(s.Close())
	is.Equal(inChild(t, "open", path), "wrote") // free once closed
	s, err = memstore.Open(path)
	is.NoErr(err)
	ps, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(ps), 3) // P, Q and the child's: no write lost
}

// A data file removed or replaced by hand while open stops the writes
// (reads go on): a write to it would be lost, and another Open may hold
// the file at the path now.
func TestFileStoreRemovedFileStopsWrites(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "prompts.data")
	s, err := memstore.Open(path)
	is.NoErr(err)
	defer s.Close()
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	is.NoErr(os.Remove(path))
	is.Equal(inChild(t, "open", path), "wrote") // another process owns the path now
	_, err = s.CreateProject(ctx, prompts.NewProject{Name: "Q"})
	is.Equal(prompts.ErrorCode(err), prompts.CodeInternal)                  // not acknowledged
	is.True(s.Err() != nil && strings.Contains(s.Err().Error(), "removed")) // Err says why
	_, err = s.GetProject(ctx, proj.ID)
	is.NoErr(err) // reads go on
}

// A link planted at the name of a compaction's new file is removed, not
// followed: what it points at is left as it is. A stale file there, left
// by a crash, is removed, never reused.
func TestFileStoreCompactionFileIsCreatedExclusively(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	dir := t.TempDir()
	path := filepath.Join(dir, "prompts.data")
	victim := filepath.Join(t.TempDir(), "precious")
	is.NoErr(os.WriteFile(victim, []byte("precious\n"), 0o600))
	// A file an earlier release wrote, which Open compacts.
	old, err := os.ReadFile("testdata/journal-v1.data")
	is.NoErr(err)
	is.NoErr(os.WriteFile(path, old, 0o600))

	is.NoErr(os.Symlink(victim, path+".compact"))
	s, err := memstore.Open(path) // compacts
	is.NoErr(err)
	is.NoErr(s.Close())
	b, err := os.ReadFile(victim)
	is.NoErr(err)
	is.Equal(string(b), "precious\n") // untouched
	st, err := os.Lstat(path)
	is.NoErr(err)
	is.True(st.Mode().IsRegular()) // the data file is a file, not the link
	_, err = os.Lstat(path + ".compact")
	is.True(os.IsNotExist(err)) // the link is gone

	is.NoErr(os.WriteFile(path+".compact", []byte("stale\n"), 0o644))
	is.NoErr(os.WriteFile(path, old, 0o600))
	s, err = memstore.Open(path) // compacts
	is.NoErr(err)
	defer s.Close()
	ps, _, err := s.ListProjects(ctx, prompts.ProjectFilter{})
	is.NoErr(err)
	is.Equal(len(ps), 1) // the data is whole
	st, err = os.Stat(path)
	is.NoErr(err)
	is.Equal(st.Mode().Perm(), os.FileMode(0o600)) // a file of its own, not the stale one
}

// A path that is a symbolic link is resolved once, at Open: the data
// stays in the file it points at, compactions included, even when the
// link is changed later; a link to nothing is refused, not followed.
func TestFileStoreSymlinkedPath(t *testing.T) {
	is := is.New(t)
	ctx := context.Background()
	vol := t.TempDir() // the volume the link points into
	target := filepath.Join(vol, "prompts.data")
	link := filepath.Join(t.TempDir(), "prompts.data")
	is.NoErr(os.Symlink(target, link))

	_, err := memstore.Open(link)
	is.True(err != nil && strings.Contains(err.Error(), "does not exist")) // a link to nothing
	_, err = os.Lstat(target)
	is.True(os.IsNotExist(err)) // is not followed
	is.NoErr(os.WriteFile(target, nil, 0o600))

	s, err := memstore.Open(link) // compacts at Open
	is.NoErr(err)
	proj, err := s.CreateProject(ctx, prompts.NewProject{Name: "P"})
	is.NoErr(err)
	p, err := s.CreatePrompt(ctx, prompts.NewPrompt{ProjectID: proj.ID, Key: "k", Name: "K"})
	is.NoErr(err)
	other := filepath.Join(t.TempDir(), "other.data")
	is.NoErr(os.Remove(link))
	is.NoErr(os.Symlink(other, link)) // changed under the open Store
	grow(t, s, p.ID, 12, func() {})   // past the slack: compacts
	is.NoErr(s.Close())

	st, err := os.Lstat(link)
	is.NoErr(err)
	is.True(st.Mode()&os.ModeSymlink != 0) // still a link
	_, err = os.Lstat(other)
	is.True(os.IsNotExist(err)) // the new target was never written
	_, err = os.Lstat(filepath.Join(filepath.Dir(link), "prompts.data.compact"))
	is.True(os.IsNotExist(err)) // nothing beside the link
	s, err = memstore.Open(target)
	is.NoErr(err)
	defer s.Close()
	vs, _, err := s.ListVersions(ctx, p.ID, prompts.Page{})
	is.NoErr(err)
	is.Equal(len(vs), 12) // every write is where the link pointed at Open

	// A directory that is a link: the file is made where it points.
	dirLink := filepath.Join(t.TempDir(), "data")
	is.NoErr(os.Symlink(vol, dirLink))
	s2, err := memstore.Open(filepath.Join(dirLink, "second.data"))
	is.NoErr(err)
	is.NoErr(s2.Close())
	_, err = os.Stat(filepath.Join(vol, "second.data"))
	is.NoErr(err)
}
