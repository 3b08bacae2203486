package memstore

import (
	"bytes"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	jsonv2 "github.com/go-json-experiment/json"
	jsonv1 "github.com/go-json-experiment/json/v1"

	"github.com/promptkit/prompts"
)

// A Store opened on a file (Open) keeps everything in memory, as New's
// does, and its writes in a journal: a header, then one record per write,
// each framed as its length (4 bytes, little-endian), its CRC-32C (4
// bytes) and its JSON. A write returns once its record is fsync'd;
// concurrent writers share the fsyncs (group commit: one writer syncs
// what all have appended, the others wait for it). At Open, the journal
// is read back; a torn last record (a crash in the middle of a write,
// which was never acknowledged) is dropped with a log line. When the
// journal grows past twice the size of the data it holds plus 1 MiB, it
// is rewritten as one record per project, prompt, idempotency record and
// webhook, and records of a few hundred events, deliveries or attempts
// (compaction: into FILE.compact, created exclusively and locked, fsync'd,
// renamed over the old file), so that it stays proportional to the data.
// A compaction's last record marks its end, so that Open knows how much
// data the file held then and rewrites it only when it has grown past
// that slack (a file of an earlier release, without the mark, is
// compacted at its first Open).
// The package doc lists the rules of the file; they are kept here.
//
// Why a journal beside the in-memory store, not an embedded database such
// as bbolt: the in-memory Store already holds the data in the shape the
// reads want, with every rule of the Store; a journal of its changes adds
// durability in about 400 lines, with no second implementation of the
// rules and no dependency, and reads stay as fast as New's. The cost:
// the data must fit in memory (as it must for New), and opening reads the
// whole journal.

const journalHeader = "prompts memstore journal 1\n"

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// entry is one record of the journal: what one write changed. Journals
// written before the event log hold none of its fields; they open with an
// empty log.
type entry struct {
	Project *fileProject `json:"project,omitempty"`
	Prompt  *promptEntry `json:"prompt,omitempty"`
	Idem    *idemJSON    `json:"idem,omitempty"`

	Events     []eventJSON    `json:"events,omitempty"`
	Log        *logJSON       `json:"log,omitempty"`
	Webhook    *fileWebhook   `json:"webhook,omitempty"`
	Unhook     string         `json:"webhook_deleted,omitempty"` // its id
	Deliveries []deliveryJSON `json:"deliveries,omitempty"`
	Attempts   []fileAttempt  `json:"attempts,omitempty"`
	// Environments is a project's list of environments after a change of
	// them (journals written before projects had environments of their
	// own hold none).
	Environments *fileEnvironments `json:"environments,omitempty"`

	// An API key as it now is (created, or used), and the id of one
	// revoked. Journals written before keys hold neither.
	Key   *fileKey `json:"key,omitempty"`
	Unkey string   `json:"key_revoked,omitempty"`

	// Compacted marks the end of the records of a compaction, so that
	// Open knows how much data the file held then, as a compaction's
	// size tells a running Store (see journal.grown).
	Compacted bool `json:"compacted,omitempty"`
}

// empty reports whether e records nothing.
func (e *entry) empty() bool {
	return e.Project == nil && e.Prompt == nil && e.Idem == nil && len(e.Events) == 0 && e.Log == nil &&
		e.Webhook == nil && e.Unhook == "" && len(e.Deliveries) == 0 && len(e.Attempts) == 0 && e.Environments == nil && !e.Compacted &&
		e.Key == nil && e.Unkey == ""
}

// eventJSON is an event. It names the project, version or deployment
// record it holds, which never change and which the journal holds already,
// rather than holding it again; a prompt's event holds the prompt as it
// was.
type eventJSON struct {
	ID         int64             `json:"id"`
	Type       prompts.EventType `json:"type"`
	ProjectID  string            `json:"project_id"`
	PromptID   string            `json:"prompt_id,omitempty"`
	CreatedAt  time.Time         `json:"created_at"`
	Prompt     *filePrompt       `json:"prompt,omitempty"`
	Version    int               `json:"version,omitempty"`    // version.created: its number
	Deployment string            `json:"deployment,omitempty"` // deployment.created: its id
	Key        *fileKey          `json:"key,omitempty"`        // key.created, key.revoked: the key, without its hash
	// Environment is an environment event's environment, which may change
	// or go later: held, as a prompt's event holds its prompt.
	Environment *fileEnvironment `json:"environment,omitempty"`
}

// logJSON is the state of the log beyond its events: the newest id given,
// and the newest the retention removed.
type logJSON struct {
	Last    int64 `json:"last"`
	Expired int64 `json:"expired"`
}

// deliveryJSON is a delivery queued (with its event) or changed (without),
// or ended (Done).
type deliveryJSON struct {
	ID          string     `json:"id"`
	Done        bool       `json:"done,omitempty"`
	Webhook     string     `json:"webhook,omitempty"`
	Event       *eventJSON `json:"event,omitempty"`
	QueuedAt    time.Time  `json:"queued_at,omitzero"`
	NextAt      time.Time  `json:"next_at,omitzero"`
	LeasedUntil time.Time  `json:"leased_until,omitzero"` // written by earlier releases only
	Attempts    int        `json:"attempts,omitempty"`
}

// step is what the write under way changed besides its result: the
// events it appended and the deliveries it queued or changed, for its
// journal record. It is kept for a Store with a file only.
type step struct {
	events     []prompts.Event
	deliveries []stepDelivery
	envProject string // the project whose environments it changed
}

type stepDelivery struct {
	id     string
	queued bool // new: its record holds its event
}

// stepDelivery notes that the write under way queued (queued) or changed
// the delivery id; s.mu is held.
func (s *Store) stepDelivery(id string, queued bool) {
	if s.journal != nil {
		s.step.deliveries = append(s.step.deliveries, stepDelivery{id, queued})
	}
}

// eventJSONOf returns the journal's form of e.
func eventJSONOf(e *prompts.Event) *eventJSON {
	ej := &eventJSON{ID: e.ID, Type: e.Type, ProjectID: e.ProjectID, PromptID: e.PromptID, CreatedAt: e.CreatedAt, Prompt: (*filePrompt)(e.Prompt),
		Environment: (*fileEnvironment)(e.Environment)}
	switch {
	case e.Version != nil:
		ej.Version = e.Version.VersionNumber
	case e.Deployment != nil:
		ej.Deployment = e.Deployment.ID
	case e.Key != nil:
		ej.Key = fileKeyOfAPIKey(*e.Key)
	}
	return ej
}

// event returns the event ej names, with its resource, or false when the
// resource is not in s.
func (s *Store) event(ej *eventJSON) (prompts.Event, bool) {
	e := prompts.Event{ID: ej.ID, Type: ej.Type, ProjectID: ej.ProjectID, PromptID: ej.PromptID, CreatedAt: ej.CreatedAt}
	switch ej.Type {
	case prompts.EventProjectCreated:
		p, ok := s.projects[ej.ProjectID]
		if !ok {
			return e, false
		}
		c := *p
		e.Project = &c
	case prompts.EventPromptCreated, prompts.EventPromptUpdated:
		e.Prompt = (*prompts.Prompt)(ej.Prompt)
	case prompts.EventVersionCreated:
		rec, ok := s.prompts[ej.PromptID]
		if !ok || ej.Version < 1 || ej.Version > len(rec.versions) {
			return e, false
		}
		v := rec.versions[ej.Version-1].Copy()
		e.Version = &v
	case prompts.EventDeploymentCreated:
		rec, ok := s.prompts[ej.PromptID]
		if !ok {
			return e, false
		}
		i, found := slices.BinarySearchFunc(rec.deployments, ej.Deployment, func(d prompts.Deployment, id string) int { return strings.Compare(d.ID, id) })
		if !found {
			return e, false
		}
		d := copyDeployment(rec.deployments[i])
		e.Deployment = &d
	case prompts.EventKeyCreated, prompts.EventKeyRevoked:
		if ej.Key != nil {
			k := ej.Key.apiKey()
			e.Key = &k
		}
	case prompts.EventEnvironmentCreated, prompts.EventEnvironmentUpdated, prompts.EventEnvironmentDeleted:
		e.Environment = (*prompts.ProjectEnvironment)(ej.Environment)
	}
	return e, e.Project != nil || e.Prompt != nil || e.Version != nil || e.Deployment != nil || e.Key != nil || e.Environment != nil
}

// deliveryJSONOf returns the journal's form of d, with its event when
// withEvent. Its lease is not written: leases are kept in memory only.
func deliveryJSONOf(d *delivery, withEvent bool) deliveryJSON {
	dj := deliveryJSON{ID: d.id, NextAt: d.nextAt, Attempts: d.attempts}
	if withEvent {
		dj.Webhook, dj.Event, dj.QueuedAt = d.webhookID, eventJSONOf(&d.event), d.queuedAt
	}
	return dj
}

// promptEntry is a prompt's state after a write: its fields and what its
// environments point at, and the versions and records added since its
// last entry.
type promptEntry struct {
	P filePrompt `json:"p"`
	// Active is the number of the version production and staging serve
	// without a subject (a split's first entry's), 0 for none.
	Active [2]int `json:"active"`
	// ActiveIn is the same for the project's other environments, those
	// that point at something (absent in journals of earlier releases).
	ActiveIn map[prompts.Environment]int `json:"active_in,omitempty"`
	// Splits are the splits environments hold, by environment; absent
	// when none holds one, as in journals written before splits.
	Splits      map[prompts.Environment][]fileShare `json:"splits,omitempty"`
	Versions    []fileVersion                       `json:"versions,omitempty"`
	Deployments []fileDeployment                    `json:"deployments,omitempty"`
}

// newPromptEntry returns the entry of a prompt's state.
// ins are the typed inputs of vs, one a version.
func newPromptEntry(rec *prompt, vs []prompts.PromptVersion, ins [][]string, ds []prompts.Deployment) *promptEntry {
	pe := &promptEntry{P: filePrompt(rec.p), Versions: fileVersionsOf(vs, ins), Deployments: convertAll(ds, fileDeploymentOf)}
	put := func(env prompts.Environment, p pointer) {
		switch env {
		case prompts.Production:
			pe.Active[0] = p.n
		case prompts.Staging:
			pe.Active[1] = p.n
		default:
			if pe.ActiveIn == nil {
				pe.ActiveIn = make(map[prompts.Environment]int, len(rec.others))
			}
			pe.ActiveIn[env] = p.n
		}
		if p.split != nil {
			if pe.Splits == nil {
				pe.Splits = make(map[prompts.Environment][]fileShare)
			}
			pe.Splits[env] = fileSplitOf(p.split.split)
		}
	}
	put(prompts.Production, rec.active[0])
	put(prompts.Staging, rec.active[1])
	for env, p := range rec.others {
		put(env, p)
	}
	return pe
}

// pointTo puts what pe says the prompt's environments point at into rec,
// whose versions pe's are added to already. A split that names a version
// rec does not have (a file damaged by hand) is dropped with a log line:
// the environment then serves its first entry's version, as Active says.
func (s *Store) pointTo(rec *prompt, pe *promptEntry) {
	rec.active, rec.others = [2]pointer{{n: pe.Active[0]}, {n: pe.Active[1]}}, nil
	for env, n := range pe.ActiveIn {
		rec.setAt(env, pointer{n: n})
	}
	for env, fs := range pe.Splits {
		sp := splitOf(fs)
		if !rec.resolved(sp) {
			s.log.Warn("memstore: dropped a split that names a version the prompt does not have", "prompt", rec.p.ID, "environment", env)
			continue
		}
		rec.setAt(env, rec.hold(sp))
	}
}

// fileAttempts returns the journal's form of as.
func fileAttempts(as []prompts.DeliveryAttempt) []fileAttempt {
	return convertAll(as, func(a prompts.DeliveryAttempt) fileAttempt { return fileAttempt(a) })
}

// idemJSON is an idempotency record: its key, the hex of the
// prompts.Idempotency's RecordKey, and the record, which names the write's
// result instead of holding it (a few hundred bytes, whatever the
// result's size). Journals written by earlier releases kept the scope and
// key in the clear and the whole result (in rec); Open still reads them,
// and its compaction rewrites them in this form.
type idemJSON struct {
	ID     string          `json:"id,omitempty"`
	Record *fileIdemRecord `json:"record,omitempty"`

	Scope  string      `json:"scope,omitempty"` // earlier releases'
	Key    string      `json:"key,omitempty"`
	Legacy *legacyIdem `json:"rec,omitempty"`
}

// legacyIdem is an idempotency record as earlier releases wrote it.
type legacyIdem struct {
	Op      string
	Request string // the request itself, not its digest
	Result  []byte // the write's result, as JSON
	At      time.Time
}

// idemJSONOf returns the journal's form of e.
func idemJSONOf(e *idemEntry) *idemJSON {
	rec := fileIdemRecord(e.rec)
	return &idemJSON{ID: hex.EncodeToString(e.k[:]), Record: &rec}
}

// entry returns the record ie holds, in either form, or false when it
// names nothing.
func (ie *idemJSON) entry() (idemEntry, bool) {
	var e idemEntry
	switch {
	case ie.Record != nil:
		k, err := hex.DecodeString(ie.ID)
		if err != nil || len(k) != len(e.k) || ie.Record.PromptID == "" {
			return e, false
		}
		e.k, e.rec = idemKey(k), prompts.IdempotencyRecord(*ie.Record)
		return e, true
	case ie.Legacy != nil:
		e.k = idemKey(prompts.Idempotency{Scope: ie.Scope, Key: ie.Key}.RecordKey())
		rec, ok := ie.Legacy.record()
		e.rec = rec
		return e, ok
	}
	return e, false
}

// record returns the ids of the result l holds, as a record of this
// release names it.
func (l *legacyIdem) record() (prompts.IdempotencyRecord, bool) {
	var res struct {
		ID            string              `json:"id"`
		PromptID      string              `json:"prompt_id"`
		VersionNumber int                 `json:"version_number"`
		Environment   prompts.Environment `json:"environment"`
		ActiveVersion *struct {
			ID            string `json:"id"`
			VersionNumber int    `json:"version_number"`
		} `json:"active_version"`
	}
	if err := json.Unmarshal(l.Result, &res); err != nil {
		return prompts.IdempotencyRecord{}, false
	}
	r := prompts.IdempotencyRecord{Op: l.Op, Request: prompts.Idempotency{Request: l.Request}.RequestDigest(), At: l.At}
	switch l.Op {
	case opCreatePrompt:
		r.PromptID = res.ID
	case opCreateVersion:
		r.PromptID, r.VersionID, r.VersionNumber = res.PromptID, res.ID, res.VersionNumber
	case opRollback:
		r.PromptID, r.Environment = res.ID, res.Environment
		if av := res.ActiveVersion; av != nil {
			r.VersionID, r.VersionNumber = av.ID, av.VersionNumber
		}
	}
	return r, r.PromptID != ""
}

// WithLogger sets the logger of a Store opened on a file: it logs a
// dropped torn record, a failed compaction and compactions. By default
// nothing is logged.
func WithLogger(l *slog.Logger) Option { return func(s *Store) { s.log = l } }

// Open returns a Store whose data lives in the file at path (created when
// it does not exist) as well as in memory: every write is on disk before
// it returns, and a Store opened on the file again, after Close or a
// crash, holds every write that returned. Close it when done.
//
// Open resolves path once, through symbolic links: the data stays in the
// file a link points at. It refuses a directory (the file's, or one above it) that any user may write
// (without the sticky bit), and a file that another Open holds, in this
// process or another; see the package doc.
//
// A write that cannot be written to the file, or whose file was removed
// or replaced at the path, fails with an internal error, and so does
// every later write (reads go on): the data in memory may hold the failed
// write, which the file may not. A failed compaction stops nothing: it is
// logged and retried later.
//
// A write is visible to reads as soon as it is made, before it is on disk
// (it returns only once it is): a crash in between loses it, though a
// reader may have seen it.
//
// A file damaged in the middle (whole records after one that cannot be
// read, which a crash does not leave) is refused, and left as it is.
func Open(path string, opts ...Option) (*Store, error) {
	s := New(opts...)
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	real, err := resolve(path)
	if err != nil {
		return nil, err
	}
	for _, dir := range []string{filepath.Dir(real), filepath.Dir(path)} {
		if err := checkDir(dir); err != nil {
			return nil, err
		}
	}
	f, info, lock, err := openData(real)
	if err != nil {
		return nil, err
	}
	j, err := s.load(f, real)
	if err != nil {
		f.Close()
		lock.Close()
		return nil, err
	}
	j.info, j.lock = info, lock
	s.journal = j
	s.mu.Lock()
	if j.base == 0 || j.grown() { // unless the last compaction was recent enough
		err = s.tidy()
	}
	s.mu.Unlock()
	if err != nil {
		s.Close()
		return nil, err
	}
	return s, nil
}

// resolve returns the absolute path of the file that path names, through
// symbolic links: those of the file when it exists, else those of its
// directory.
func resolve(path string) (string, error) {
	abs, err := filepath.Abs(path)
	if err != nil {
		return "", fmt.Errorf("memstore: %w", err)
	}
	if _, err := os.Lstat(abs); err == nil {
		real, err := filepath.EvalSymlinks(abs)
		if errors.Is(err, fs.ErrNotExist) {
			return "", fmt.Errorf("memstore: %s is a symbolic link to a file that does not exist: create that file (empty will do), or give its path", path)
		}
		if err != nil {
			return "", fmt.Errorf("memstore: resolving %s: %w", path, err)
		}
		return real, nil
	} else if !errors.Is(err, fs.ErrNotExist) {
		return "", fmt.Errorf("memstore: %w", err)
	}
	dir, err := filepath.EvalSymlinks(filepath.Dir(abs))
	if err != nil {
		return "", fmt.Errorf("memstore: the directory of %s: %w", path, err)
	}
	return filepath.Join(dir, filepath.Base(abs)), nil
}

// openData opens the data file at its resolved path (created when
// missing, never through a link) and locks it. The lock is on the file
// the path names once it is held: a file that the owner of the lock
// renamed over the old one in between is opened again.
func openData(path string) (*os.File, os.FileInfo, io.Closer, error) {
	for range 3 {
		f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|noFollow, 0o600)
		if err != nil {
			return nil, nil, nil, fmt.Errorf("memstore: %w", err)
		}
		info, err := f.Stat()
		if err == nil && !info.Mode().IsRegular() {
			err = fmt.Errorf("memstore: %s is not a regular file", path)
		}
		var lock io.Closer
		if err == nil {
			lock, err = lockData(f, path)
		}
		if err != nil {
			f.Close()
			return nil, nil, nil, err
		}
		if now, err := os.Lstat(path); err == nil && os.SameFile(now, info) {
			return f, info, lock, nil
		}
		f.Close()
		lock.Close()
	}
	return nil, nil, nil, errInUse(path)
}

func errInUse(path string) error {
	return fmt.Errorf("memstore: %s is in use by another process (or another Open of it in this one)", path)
}

// Err returns the failure that stopped the writes of a Store opened on a
// file (see Open), or nil while it writes: a readiness check asks it. It
// is always nil for a Store made by New.
func (s *Store) Err() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.writable()
}

// Close writes out what is left, and releases the file. It does nothing
// for a Store made by New.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	j := s.journal
	if j == nil || j.closed {
		return nil
	}
	err := j.wait(j.appended())
	j.closed = true
	err = errors.Join(err, j.f.Close(), j.lock.Close())
	j.setErr(prompts.Unavailable(errors.New("memstore: the store is closed")))
	close(s.appended) // WaitEvents: nothing more comes
	return err
}

// load reads the journal in f, at path, into s, dropping a torn tail.
func (s *Store) load(f *os.File, path string) (*journal, error) {
	data, err := readAll(f)
	if err != nil {
		return nil, fmt.Errorf("memstore: reading %s: %w", path, err)
	}
	good, compacted := 0, int64(0)
	switch {
	case len(data) == 0:
	case bytes.HasPrefix(data, []byte(journalHeader)):
		good, compacted = s.loadRecords(data)
	case len(data) < len(journalHeader) && bytes.HasPrefix([]byte(journalHeader), data):
		good = 0 // a header torn at the file's creation
	default:
		return nil, fmt.Errorf("memstore: %s is not a prompts journal", path)
	}
	if good < len(data) && readableAfter(data, good) {
		return nil, fmt.Errorf("memstore: %s is damaged at byte %d, with whole records after it: not the torn end a crash leaves, so it is left as it is; restore it from a copy", path, good)
	}
	if good < len(data) {
		s.log.Warn("memstore: dropped a torn record at the end of the journal (a write cut by a crash, never acknowledged)",
			"file", path, "offset", good, "bytes", len(data)-good)
		if err := f.Truncate(int64(good)); err != nil {
			return nil, fmt.Errorf("memstore: %w", err)
		}
	}
	if good == 0 {
		if _, err := f.WriteAt([]byte(journalHeader), 0); err != nil {
			return nil, fmt.Errorf("memstore: %w", err)
		}
		good = len(journalHeader)
	}
	if _, err := f.Seek(int64(good), io.SeekStart); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	if err := f.Sync(); err != nil {
		return nil, fmt.Errorf("memstore: %w", err)
	}
	j := &journal{f: f, path: path, size: int64(good), base: compacted, expired: s.expiredThrough}
	j.cond = sync.NewCond(&j.mu)
	return j, nil
}

// loadRecords applies the records of data, a journal, to s, and returns
// where the last whole and readable one ends, and where the records of
// the last compaction did (0 when no compaction marked its end).
//
// Decoding the JSON is most of the cost of an Open, so the records are
// decoded a batch at a time by as many goroutines as there are
// processors, all ended before it returns, and applied in order; and
// with github.com/go-json-experiment/json (the encoding/json/v2
// prototype) with encoding/json's semantics (DefaultOptionsV1): it
// decodes the same records alike, 4x as fast.
func (s *Store) loadRecords(data []byte) (good int, compacted int64) {
	good = len(journalHeader)
	workers := runtime.GOMAXPROCS(0)
	const batch = 4096
	payloads := make([][]byte, 0, batch)
	ends := make([]int, 0, batch)
	entries := make([]entry, batch)
	bad := make([]bool, batch)
	for off := good; ; {
		payloads, ends = payloads[:0], ends[:0]
		for off < len(data) && len(payloads) < batch {
			payload, n := frame(data[off:])
			if n == 0 {
				break
			}
			off += n
			payloads, ends = append(payloads, payload), append(ends, off)
		}
		if len(payloads) == 0 {
			return good, compacted
		}
		var wg sync.WaitGroup
		for w := range workers {
			wg.Go(func() {
				for i := w; i < len(payloads); i += workers {
					entries[i] = entry{}
					bad[i] = jsonv2.Unmarshal(payloads[i], &entries[i], jsonv1.DefaultOptionsV1()) != nil
				}
			})
		}
		wg.Wait()
		for i := range payloads {
			if bad[i] {
				return good, compacted
			}
			s.apply(entries[i])
			if entries[i].Compacted {
				compacted = int64(ends[i])
			}
			entries[i] = entry{}
			good = ends[i]
		}
	}
}

// readAll reads f whole, into a buffer of its size (io.ReadAll's growing
// one costs a large file a tenth of a second).
func readAll(f *os.File) ([]byte, error) {
	info, err := f.Stat()
	if err != nil {
		return nil, err
	}
	buf := bytes.NewBuffer(make([]byte, 0, info.Size()+512))
	_, err = buf.ReadFrom(f)
	return buf.Bytes(), err
}

// readableAfter reports whether a whole record starts anywhere in data
// after the bad one at off.
func readableAfter(data []byte, off int) bool {
	for o := off + 1; o+8 <= len(data); o++ {
		if payload, n := frame(data[o:]); n > 0 && json.Valid(payload) {
			return true
		}
	}
	return false
}

// frame returns the payload of the record at the start of b and the
// record's length, or n 0 when b does not start with a whole, intact one.
func frame(b []byte) (payload []byte, n int) {
	if len(b) < 8 {
		return nil, 0
	}
	size := binary.LittleEndian.Uint32(b)
	if uint64(size) > uint64(len(b)-8) {
		return nil, 0
	}
	payload = b[8 : 8+size]
	if crc32.Checksum(payload, castagnoli) != binary.LittleEndian.Uint32(b[4:]) {
		return nil, 0
	}
	return payload, 8 + int(size)
}

// appendFrame appends the record of payload to b.
func appendFrame(b, payload []byte) []byte {
	b = binary.LittleEndian.AppendUint32(b, uint32(len(payload)))
	b = binary.LittleEndian.AppendUint32(b, crc32.Checksum(payload, castagnoli))
	return append(b, payload...)
}

// apply puts a record read back into s.
func (s *Store) apply(e entry) {
	if p := (*prompts.Project)(e.Project); p != nil {
		if _, ok := s.projects[p.ID]; !ok {
			s.projectOrder = insertSorted(s.projectOrder, p.ID)
		}
		s.projects[p.ID] = p
		s.slugs[p.Slug] = p.ID
	}
	if pe := e.Prompt; pe != nil {
		rec, ok := s.prompts[pe.P.ID]
		if !ok {
			rec = &prompt{}
			s.prompts[pe.P.ID] = rec
			s.promptOrder = insertSorted(s.promptOrder, pe.P.ID)
			s.byProject[pe.P.ProjectID] = insertSorted(s.byProject[pe.P.ProjectID], pe.P.ID)
		} else if rec.p.Key != pe.P.Key {
			delete(s.byKey, projectKey{rec.p.ProjectID, rec.p.Key})
		}
		s.byKey[projectKey{pe.P.ProjectID, pe.P.Key}] = pe.P.ID
		rec.p = prompts.Prompt(pe.P)
		rec.versions = append(rec.versions, versionsOf(pe.Versions)...)
		for _, fv := range pe.Versions {
			rec.inputs = append(rec.inputs, fv.Inputs)
		}
		s.pointTo(rec, pe)
		rec.deployments = append(rec.deployments, convertAll(pe.Deployments, fileDeployment.deployment)...)
		rec.journaledVersions, rec.journaledDeployments = len(rec.versions), len(rec.deployments)
	}
	if fe := e.Environments; fe != nil {
		s.envs[fe.ProjectID] = convertAll(fe.List, func(e fileEnvironment) prompts.ProjectEnvironment { return prompts.ProjectEnvironment(e) })
	}
	if ie := e.Idem; ie != nil {
		if r, ok := ie.entry(); ok {
			s.idem[r.k] = r.rec
			s.idemOrder = append(s.idemOrder, r)
		} else {
			s.log.Warn("memstore: dropped an idempotency record that names no result")
		}
	}
	s.applyEvents(e)
	s.applyKey(e)
}

// applyEvents puts the log's and the webhooks' part of a record read back
// into s.
func (s *Store) applyEvents(e entry) {
	for i := range e.Events {
		ej := &e.Events[i]
		if ej.ID <= s.expiredThrough || len(s.events) > 0 && ej.ID <= s.events[len(s.events)-1].ID {
			continue
		}
		s.lastEvent = max(s.lastEvent, ej.ID)
		if ev, ok := s.event(ej); ok {
			s.keepEvent(ev)
		} else {
			s.log.Warn("memstore: dropped an event that names nothing", "event", ej.ID)
		}
	}
	if l := e.Log; l != nil {
		s.lastEvent = max(s.lastEvent, l.Last, l.Expired)
		s.expiredThrough = max(s.expiredThrough, l.Expired)
		n := 0
		for n < len(s.events) && s.events[n].ID <= s.expiredThrough {
			n++
		}
		s.dropEvents(n)
	}
	if w := e.Webhook; w != nil {
		s.addWebhook((*prompts.Webhook)(w))
	}
	if e.Unhook != "" {
		s.deleteWebhook(e.Unhook)
	}
	for _, dj := range e.Deliveries {
		d, ok := s.deliveries[dj.ID]
		switch {
		case dj.Done:
			s.removeDelivery(dj.ID)
		case ok:
			d.nextAt, d.leasedUntil, d.attempts = dj.NextAt, dj.LeasedUntil, dj.Attempts
		case dj.Event != nil && s.webhooks[dj.Webhook] != nil && dj.ID > s.lastDelivery:
			ev, ok := s.event(dj.Event)
			if !ok {
				s.log.Warn("memstore: dropped a delivery of an event that names nothing", "delivery", dj.ID)
				continue
			}
			s.addDelivery(&delivery{id: dj.ID, webhookID: dj.Webhook, event: ev, queuedAt: dj.QueuedAt,
				nextAt: dj.NextAt, leasedUntil: dj.LeasedUntil, attempts: dj.Attempts})
		}
	}
	for _, a := range e.Attempts {
		if s.webhooks[a.WebhookID] != nil {
			s.attempts[a.WebhookID] = append(s.attempts[a.WebhookID], prompts.DeliveryAttempt(a))
		}
	}
}

// journalChange appends the record of a write whose result is v (and its
// idempotency record, if any) to the journal; s.mu is held. It returns
// the journal's end after it.
func (s *Store) journalChange(v any, idem *idemEntry) (int64, error) {
	var e entry
	switch v := v.(type) {
	case prompts.Project:
		e.Project = (*fileProject)(s.projects[v.ID])
	case prompts.Prompt:
		e.Prompt = s.promptEntry(v.ID)
	case prompts.PromptVersion:
		e.Prompt = s.promptEntry(v.PromptID)
	case prompts.ActivePrompt:
		e.Prompt = s.promptEntry(v.ID)
	}
	if idem != nil {
		e.Idem = idemJSONOf(idem)
	}
	return s.journalEntry(e)
}

// journalEntry appends e, with what the write's step changed besides (its
// events, its deliveries, the retention's progress), to the journal; s.mu
// is held. It returns the journal's end after it, 0 when there was nothing
// to write.
func (s *Store) journalEntry(e entry) (int64, error) {
	if id := s.step.envProject; id != "" {
		e.Environments = fileEnvironmentsOf(id, s.envs[id])
	}
	for i := range s.step.events {
		e.Events = append(e.Events, *eventJSONOf(&s.step.events[i]))
	}
	var ids []string
	queued := make(map[string]bool, len(s.step.deliveries))
	for _, sd := range s.step.deliveries {
		if _, ok := queued[sd.id]; !ok {
			ids = append(ids, sd.id)
		}
		queued[sd.id] = queued[sd.id] || sd.queued
	}
	for _, id := range ids {
		if d, ok := s.deliveries[id]; ok {
			e.Deliveries = append(e.Deliveries, deliveryJSONOf(d, queued[id])) // its state now
		} else if !queued[id] { // queued and ended in one step: nothing to keep
			e.Deliveries = append(e.Deliveries, deliveryJSON{ID: id, Done: true})
		}
	}
	s.step = step{}
	if s.expiredThrough != s.journal.expired {
		e.Log = &logJSON{Last: s.lastEvent, Expired: s.expiredThrough}
		s.journal.expired = s.expiredThrough
	}
	if e.empty() {
		return 0, nil
	}
	b, err := marshalRecord(e)
	if err != nil {
		err = prompts.Internal(fmt.Errorf("memstore: encoding a journal record: %w", err))
		s.journal.setErr(err)
		return 0, err
	}
	pos := s.journal.append(b)
	if s.journal.grown() {
		if err := s.tidy(); err != nil {
			return 0, err
		}
		pos = s.journal.appended()
	}
	return pos, nil
}

// promptEntry is the record of the prompt's state, with what was added
// since its last record.
func (s *Store) promptEntry(id string) *promptEntry {
	rec, ok := s.prompts[id]
	if !ok {
		return nil
	}
	pe := newPromptEntry(rec, rec.versions[rec.journaledVersions:], rec.inputs[rec.journaledVersions:], rec.deployments[rec.journaledDeployments:])
	rec.journaledVersions, rec.journaledDeployments = len(rec.versions), len(rec.deployments)
	return pe
}

// tidy compacts the journal, unless the retry of a failed compaction is
// not due yet; s.mu is held. A failed compaction is housekeeping left
// undone, not a failed write: it is logged (once, until one succeeds) and
// retried after a delay that doubles up to a minute, and the writes go
// on. tidy fails only when the journal does (a failed write or fsync).
func (s *Store) tidy() error {
	j := s.journal
	if !j.retryAt.IsZero() && s.clock.Now().Before(j.retryAt) {
		return nil
	}
	err := s.compact()
	if ferr := j.failed(); ferr != nil {
		return ferr
	}
	if err != nil {
		j.failures++
		j.backoff = min(max(2*j.backoff, time.Second), time.Minute)
		j.retryAt = s.clock.Now().Add(j.backoff)
		if j.failures == 1 {
			s.log.Error("memstore: compaction failed; writes go on, and it is retried later", "file", j.path, "err", err)
		}
		return nil
	}
	if j.failures > 0 {
		s.log.Info("memstore: compaction succeeded after failed attempts", "file", j.path, "failed", j.failures)
	}
	j.failures, j.backoff, j.retryAt = 0, 0, time.Time{}
	return nil
}

// compact rewrites the journal as the records of the data it holds; s.mu
// is held. A failure before the new file takes the old one's place
// changes nothing; one after it (the directory's fsync) fails the
// journal.
func (s *Store) compact() error {
	j := s.journal
	if err := j.wait(j.appended()); err != nil {
		return err
	}
	var buf bytes.Buffer
	buf.WriteString(journalHeader)
	add := func(e entry) error {
		b, err := marshalRecord(e)
		if err != nil {
			return err
		}
		buf.Write(appendFrame(nil, b))
		return nil
	}
	var err error
	for _, id := range s.projectOrder {
		err = errors.Join(err, add(entry{Project: (*fileProject)(s.projects[id])}))
		if l, ok := s.envs[id]; ok {
			err = errors.Join(err, add(entry{Environments: fileEnvironmentsOf(id, l)}))
		}
	}
	for _, id := range s.promptOrder {
		rec := s.prompts[id]
		err = errors.Join(err, add(entry{Prompt: newPromptEntry(rec, rec.versions, rec.inputs, rec.deployments)}))
		rec.journaledVersions, rec.journaledDeployments = len(rec.versions), len(rec.deployments)
	}
	now := s.clock.Now()
	for _, e := range s.idemOrder { // oldest first, as they expire
		if r, ok := s.idem[e.k]; ok && r.At.Equal(e.rec.At) && !r.Expired(now) {
			err = errors.Join(err, add(entry{Idem: idemJSONOf(&idemEntry{e.k, r})}))
		}
	}
	err = errors.Join(err, s.compactEvents(add))
	err = errors.Join(err, s.compactKeys(add))
	err = errors.Join(err, add(entry{Compacted: true}))
	if err == nil {
		err = j.replace(buf.Bytes())
	}
	if err != nil {
		return fmt.Errorf("memstore: compacting %s: %w", j.path, err)
	}
	s.log.Debug("memstore: journal compacted", "file", j.path, "bytes", buf.Len())
	return nil
}

// compactEvents adds the records of the event log, the webhooks and
// their outbox to a compaction; s.mu is held.
func (s *Store) compactEvents(add func(entry) error) error {
	const batch = 256
	err := add(entry{Log: &logJSON{Last: s.lastEvent, Expired: s.expiredThrough}})
	s.journal.expired = s.expiredThrough
	for evs := range slices.Chunk(s.events, batch) {
		e := entry{Events: make([]eventJSON, len(evs))}
		for i := range evs {
			e.Events[i] = *eventJSONOf(&evs[i])
		}
		err = errors.Join(err, add(e))
	}
	for _, id := range s.webhookOrder {
		err = errors.Join(err, add(entry{Webhook: (*fileWebhook)(s.webhooks[id])}))
		for as := range slices.Chunk(s.attempts[id], batch) {
			err = errors.Join(err, add(entry{Attempts: fileAttempts(as)}))
		}
	}
	var e entry
	for _, id := range s.deliveryOrder {
		if d, ok := s.deliveries[id]; ok {
			e.Deliveries = append(e.Deliveries, deliveryJSONOf(d, true))
		}
		if len(e.Deliveries) == batch {
			err = errors.Join(err, add(e))
			e = entry{}
		}
	}
	if len(e.Deliveries) > 0 {
		err = errors.Join(err, add(e))
	}
	return err
}

// writable is nil unless the journal failed; s.mu is held.
func (s *Store) writable() error {
	if s.journal == nil {
		return nil
	}
	return s.journal.failed()
}

// journalEnd is where the journal ends now (0 without one); s.mu is held.
func (s *Store) journalEnd() int64 {
	if s.journal == nil {
		return 0
	}
	return s.journal.appended()
}

// journal is the file of a Store opened on one. Its positions count the
// bytes appended since Open, across compactions, so that a position taken
// before a compaction is still one after it.
type journal struct {
	path string    // resolved at Open
	lock io.Closer // where flock is missing, the lock file

	// The retries of a failed compaction; s.mu guards them.
	retryAt  time.Time
	backoff  time.Duration
	failures int // since the last compaction that succeeded

	expired int64 // the Store's expiredThrough as the journal has it; s.mu guards it

	mu      sync.Mutex
	cond    *sync.Cond
	f       *os.File
	buf     []byte // appended, not yet written
	end     int64  // the position after the last record appended
	synced  int64  // the position up to which the records are on disk
	size    int64  // the current file's size once buf is written
	base    int64  // its size after the last compaction
	syncing bool   // a writer is writing and syncing
	err     error  // the first failure; every later write fails with it
	closed  bool

	info os.FileInfo // f's, to tell whether the path still names f
}

// append appends the record of payload, to be written by the next wait;
// it returns the journal's end after it.
func (j *journal) append(payload []byte) int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := len(j.buf)
	j.buf = appendFrame(j.buf, payload)
	j.end += int64(len(j.buf) - n)
	j.size += int64(len(j.buf) - n)
	return j.end
}

// grown reports whether the file is past twice the size of the data it
// held at the last compaction, plus 1 MiB: time to compact.
func (j *journal) grown() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.size > 2*j.base+1<<20
}

// appended is the journal's end.
func (j *journal) appended() int64 {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.end
}

// wait returns once the journal is on disk up to pos. The first waiter
// writes and syncs everything appended so far, for every waiter; the
// others wait for it (group commit).
func (j *journal) wait(pos int64) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	for j.synced < pos && j.err == nil {
		if j.syncing {
			j.cond.Wait()
			continue
		}
		j.syncing = true
		buf, target, f, info := j.buf, j.end, j.f, j.info
		j.buf = nil
		j.mu.Unlock()
		err := j.check(info)
		if err == nil {
			_, err = f.Write(buf)
		}
		if err == nil {
			err = f.Sync()
		}
		j.mu.Lock()
		j.syncing = false
		if errors.Is(err, errReplaced) {
			j.err = prompts.Internal(fmt.Errorf("memstore: %s was removed or replaced while open; writes stop, and what they wrote since is in memory only: stop the process, and restore the file", j.path))
		} else if err != nil {
			j.err = prompts.Internal(fmt.Errorf("memstore: writing %s: %w", j.path, err))
		} else {
			j.synced = target
		}
		j.cond.Broadcast()
	}
	if j.synced >= pos {
		return nil
	}
	return j.err
}

var errReplaced = errors.New("the file at the path is another")

// check returns errReplaced unless the path still names the file of
// info: a write to a file removed or replaced by hand would be lost, and
// another Open may hold the file at the path now.
func (j *journal) check(info os.FileInfo) error {
	now, err := os.Lstat(j.path)
	if err != nil || !os.SameFile(now, info) {
		return errReplaced
	}
	return nil
}

// replace makes data the whole journal: written to a new file, created
// exclusively beside the old one and locked, synced, and renamed over the
// old one. Nothing is pending (s.mu is held and the journal was waited
// for). A failure before the rename leaves everything as it was; the
// directory's fsync after it failing fails the journal, since what the
// directory holds is unknown then.
func (j *journal) replace(data []byte) error {
	dir, err := os.Open(filepath.Dir(j.path)) // first: with no descriptor left, nothing changes
	if err != nil {
		return err
	}
	defer dir.Close()
	tmp := j.path + ".compact"
	f, err := createExclusive(tmp)
	if err != nil {
		return err
	}
	info, err := f.Stat()
	if err == nil {
		err = lockNew(f)
	}
	if err == nil {
		_, err = f.Write(data)
	}
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = os.Rename(tmp, j.path)
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	j.mu.Lock()
	old := j.f
	j.f, j.info = f, info
	j.synced = j.end // the new file holds every record appended
	j.size, j.base = int64(len(data)), int64(len(data))
	j.mu.Unlock()
	old.Close()
	if err := dir.Sync(); err != nil {
		err = prompts.Internal(fmt.Errorf("memstore: syncing the directory of %s after a compaction: %w", j.path, err))
		j.setErr(err)
		return err
	}
	return nil
}

// createExclusive creates the file at path, never following a symbolic
// link nor opening a file that exists: a stale one (left by a crash) is
// removed first, by its name, which removes a link, not what it points
// at. When something at path cannot be removed, it fails.
func createExclusive(path string) (*os.File, error) {
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, err
	}
	return os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL|noFollow, 0o600)
}

func (j *journal) setErr(err error) {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.err == nil {
		j.err = err
	}
}

func (j *journal) failed() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.err
}

// marshalRecord encodes a record of the data file as encoding/json does,
// but leaves <, > and & (and U+2028, U+2029) as they are: json.Marshal
// escapes them even inside the raw text a Marshaler returns, and a
// version's metadata is raw text that must come back byte for byte.
func marshalRecord(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}
