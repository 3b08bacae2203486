package promptfile

import (
	"bytes"
	"context"
	"io"
	"io/fs"
	"maps"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// FS is a read-only file system of a project's prompts as prompt files:
// one file per prompt that has a version active in an environment, at
// that version (support/greeting.prompt for the key support/greeting,
// each '/' of a key a directory), written as Format writes them
// (ForVersion). A dotprompt version is a Dotprompt file that Genkit and
// Dotprompt load as they load their own; a plain version is marked
// prompts.format: plain.
//
// A file cannot express a split, nor pick for a subject: of an
// environment that holds a split, the file is the split's first entry's
// version (as a read without a subject answers), and so is a partial's;
// the split's other versions are not served. Read the prompt with
// prompts.ReadActive and a Subject to serve each subject its version.
//
// It is a snapshot, read when NewFS is called: make another to see
// later changes. It implements fs.FS, fs.ReadDirFS, fs.ReadFileFS and
// fs.StatFS, and is safe for concurrent use.
//
// For Genkit (github.com/firebase/genkit/go v1.4.0):
//
//	fsys, err := promptfile.NewFS(ctx, store, projectID, prompts.Production)
//	…
//	noPrompts := fstest.MapFS{"prompts": {Mode: fs.ModeDir | 0o555}}
//	g := genkit.Init(ctx, genkit.WithPromptFS(noPrompts))
//	genkit.LoadPromptDirFromFS(g, fsys, ".", "")
//
// genkit.Init without WithPromptFS loads ./prompts of the working
// directory as well, and a file there with the name of one of these
// prompts panics ("already registered"); with WithPromptFS it loads
// that file system's directory "prompts", and v1.4.0 refuses
// WithPromptDir alongside it. So Init gets an empty directory, and the
// FS, whose files are at its root, is loaded after.
//
// Genkit names a prompt by its file's name without the directory (the
// last segment of the key), and takes a name beginning with an
// underscore as a partial; a key cannot begin with one.
//
// # Partials
//
// A prompt that an active version includes as a partial ({{> KEY}}, see
// PromptVersion.Partials) and that has a version active in the
// environment is also a partial file, _KEY.prompt at the root, when its
// key has no '/': the template the server includes, without front matter
// (a dotprompt version's content, trimmed when it has metadata; a plain
// version's content as it is, which Genkit reads as a template: the same
// text unless it holds a "{{" that is not a {{variable}}). Genkit and
// Dotprompt's DirStore register _header.prompt as the partial header,
// the name {{> header}} uses.
//
// A key with a '/' has no partial file: Genkit (v1.4.0,
// LoadPromptDirFromFS) names a partial by its file's name alone,
// without the directory, so shared/_header.prompt would be the partial
// header, not shared/header, and no file name can hold the '/' that
// {{> shared/header}} looks up (two such files with the same last
// segment would make Genkit panic). Register those with
// genkit.DefinePartial(g, key, template) from Partials after
// genkit.Init. Dotprompt's DirStore (which names shared/_header.prompt
// shared/header) can take them the same way, through its Partials option.
//
// promptfile.ReadDir reads the prompt files of an FS only when it has
// no partial file: _KEY.prompt is not a prompt key.
type FS struct {
	nodes    map[string]*node  // by path; "." is the root
	partials map[string]string // the templates of the partials, by key
}

// node is a file or a directory of an FS.
type node struct {
	name    string
	data    []byte    // a file's
	entries []*node   // a directory's, sorted by name
	modTime time.Time // a file's version's creation; a directory's newest file's
	isDir   bool
}

// NewFS reads the prompts of the project projectID that have a version
// active in env from store (any prompts.Store: a memstore, a sqlstore, a
// client.Client of a remote server) and returns them as an FS. A key that
// cannot be a file's path (an empty, "." or ".." segment), or whose file
// would be a directory of another key's (the keys a and a.prompt/b), is
// left out.
func NewFS(ctx context.Context, store prompts.Store, projectID string, env prompts.Environment) (*FS, error) {
	root := &node{name: ".", isDir: true}
	fsys := &FS{nodes: map[string]*node{".": root}}
	f := prompts.PromptFilter{ProjectIDs: []string{projectID}, Page: prompts.Page{Limit: prompts.MaxLimit}}
	included := map[string]bool{}         // the keys active versions include
	templates := map[string]partialFile{} // the active versions as partials, by key
	for {
		list, more, err := store.ListPrompts(ctx, f)
		if err != nil {
			return nil, err
		}
		for _, p := range list {
			a, err := store.GetActive(ctx, p.ID, env)
			if err != nil {
				return nil, err
			}
			if a.ActiveVersion == nil {
				continue
			}
			v := *a.ActiveVersion
			for _, k := range v.Partials {
				included[k] = true
			}
			templates[p.Key] = partialFile{partialTemplate(v), v.CreatedAt}
			name, err := Path(p.Key)
			if err != nil {
				continue
			}
			data, err := Format(ForVersion(a.Prompt, *a.ActiveVersion))
			if err != nil {
				return nil, err
			}
			fsys.add(name, data, a.ActiveVersion.CreatedAt)
		}
		if !more || len(list) == 0 {
			break
		}
		f.After = list[len(list)-1].ID
	}
	fsys.partials = map[string]string{}
	for k := range included {
		pf, ok := templates[k]
		if !ok {
			continue // no version active: Genkit says so at the render, as the server does
		}
		fsys.partials[k] = pf.template
		if !strings.Contains(k, "/") {
			fsys.add("_"+k+Ext, []byte(pf.template), pf.modTime)
		}
	}
	for _, n := range fsys.nodes {
		slices.SortFunc(n.entries, func(a, b *node) int { return strings.Compare(a.name, b.name) })
	}
	return fsys, nil
}

// partialFile is a version's template as a partial, and its creation.
type partialFile struct {
	template string
	modTime  time.Time
}

// partialTemplate returns the template that including v as a partial
// renders, as the server includes it (prompts.Renderer): a dotprompt
// version's content, trimmed when it has front matter (metadata), as
// Dotprompt trims a file's body; a plain version's content.
func partialTemplate(v prompts.PromptVersion) string {
	if v.TemplateFormat == prompts.FormatDotprompt && !v.Metadata.IsNull() {
		return strings.TrimSpace(v.Content)
	}
	return v.Content
}

// Partials returns the templates of the prompts that versions active in
// the environment include as partials and that have a version active
// there, by key, each as its partial file holds it (keys with a '/'
// included, which have no file: register them with
// genkit.DefinePartial). The map is the caller's.
func (fsys *FS) Partials() map[string]string { return maps.Clone(fsys.partials) }

// add adds the file name, and the directories above it; a name taken
// already (by a file or a directory) is left as it is.
func (fsys *FS) add(name string, data []byte, modTime time.Time) {
	if _, taken := fsys.nodes[name]; taken {
		return
	}
	// The directories above must be directories, or made.
	for dir := path.Dir(name); dir != "."; dir = path.Dir(dir) {
		if n, ok := fsys.nodes[dir]; ok && !n.isDir {
			return
		}
	}
	child := &node{name: path.Base(name), data: data, modTime: modTime}
	fsys.nodes[name] = child
	for p := path.Dir(name); ; p = path.Dir(p) {
		dir, existed := fsys.nodes[p]
		if !existed {
			dir = &node{name: path.Base(p), isDir: true}
			fsys.nodes[p] = dir
		}
		if child != nil {
			dir.entries = append(dir.entries, child)
		}
		if modTime.After(dir.modTime) {
			dir.modTime = modTime
		}
		child = nil
		if !existed {
			child = dir // a new directory: an entry of its parent
		}
		if p == "." {
			return
		}
	}
}

func (fsys *FS) lookup(op, name string) (*node, error) {
	if !fs.ValidPath(name) {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrInvalid}
	}
	n, ok := fsys.nodes[name]
	if !ok {
		return nil, &fs.PathError{Op: op, Path: name, Err: fs.ErrNotExist}
	}
	return n, nil
}

// Open opens the file or directory name.
func (fsys *FS) Open(name string) (fs.File, error) {
	n, err := fsys.lookup("open", name)
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return &openDir{n: n, path: name}, nil
	}
	return &openFile{n: n, r: bytes.NewReader(n.data)}, nil
}

// ReadDir returns the entries of the directory name, sorted by name.
func (fsys *FS) ReadDir(name string) ([]fs.DirEntry, error) {
	n, err := fsys.lookup("readdir", name)
	if err != nil {
		return nil, err
	}
	if !n.isDir {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: errNotDir}
	}
	return entries(n.entries), nil
}

// ReadFile returns a copy of the file name's content.
func (fsys *FS) ReadFile(name string) ([]byte, error) {
	n, err := fsys.lookup("readfile", name)
	if err != nil {
		return nil, err
	}
	if n.isDir {
		return nil, &fs.PathError{Op: "readfile", Path: name, Err: errIsDir}
	}
	return bytes.Clone(n.data), nil
}

// Stat describes the file or directory name.
func (fsys *FS) Stat(name string) (fs.FileInfo, error) {
	n, err := fsys.lookup("stat", name)
	if err != nil {
		return nil, err
	}
	return info{n}, nil
}

var (
	errNotDir = fsError("not a directory")
	errIsDir  = fsError("is a directory")
)

type fsError string

func (e fsError) Error() string { return string(e) }

func entries(ns []*node) []fs.DirEntry {
	out := make([]fs.DirEntry, len(ns))
	for i, n := range ns {
		out[i] = info{n}
	}
	return out
}

// info is a node's fs.FileInfo and fs.DirEntry.
type info struct{ n *node }

func (i info) Name() string { return i.n.name }
func (i info) Size() int64  { return int64(len(i.n.data)) }
func (i info) Mode() fs.FileMode {
	if i.n.isDir {
		return fs.ModeDir | 0o555
	}
	return 0o444
}
func (i info) ModTime() time.Time         { return i.n.modTime }
func (i info) IsDir() bool                { return i.n.isDir }
func (i info) Sys() any                   { return nil }
func (i info) Type() fs.FileMode          { return i.Mode().Type() }
func (i info) Info() (fs.FileInfo, error) { return i, nil }
func (i info) String() string             { return fs.FormatFileInfo(i) }

// openFile is an open file of an FS.
type openFile struct {
	n *node
	r *bytes.Reader
}

func (f *openFile) Stat() (fs.FileInfo, error) { return info{f.n}, nil }
func (f *openFile) Read(b []byte) (int, error) { return f.r.Read(b) }
func (f *openFile) Seek(off int64, whence int) (int64, error) {
	return f.r.Seek(off, whence)
}
func (f *openFile) ReadAt(b []byte, off int64) (int, error) { return f.r.ReadAt(b, off) }
func (f *openFile) Close() error                            { return nil }

// openDir is an open directory of an FS.
type openDir struct {
	n    *node
	path string
	pos  int
}

func (d *openDir) Stat() (fs.FileInfo, error) { return info{d.n}, nil }
func (d *openDir) Read([]byte) (int, error) {
	return 0, &fs.PathError{Op: "read", Path: d.path, Err: errIsDir}
}
func (d *openDir) Close() error { return nil }

// ReadDir reads the next count entries (all the rest when count <= 0).
func (d *openDir) ReadDir(count int) ([]fs.DirEntry, error) {
	rest := d.n.entries[d.pos:]
	if count <= 0 {
		d.pos = len(d.n.entries)
		return entries(rest), nil
	}
	if len(rest) == 0 {
		return nil, io.EOF
	}
	rest = rest[:min(count, len(rest))]
	d.pos += len(rest)
	return entries(rest), nil
}

var (
	_ fs.ReadDirFS  = (*FS)(nil)
	_ fs.ReadFileFS = (*FS)(nil)
	_ fs.StatFS     = (*FS)(nil)
)
