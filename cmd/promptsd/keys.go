package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/httpapi"
)

// keyEntry is one API key as -key, a line of -keys or -api-key gives it:
// NAME:ROLE:SECRET[:SLUG,SLUG…], SECRET being a plain secret (no ':') or
// sha256:<64 hex digits>.
type keyEntry struct {
	where string // "-key argument 2", "keys.txt line 4": names it in errors, never the secret
	key   httpapi.Key
	slugs []string // the projects it may see, by slug; none: every project
}

// keyList is the repeatable -key flag.
type keyList []string

func (k *keyList) String() string { return fmt.Sprintf("%d keys", len(*k)) }
func (k *keyList) Set(v string) error {
	*k = append(*k, v)
	return nil
}

// parseKeyEntry reads one entry. Its errors name where the entry is and,
// when it could be read, the key's name; never the secret.
func parseKeyEntry(where, s string) (keyEntry, error) {
	e := keyEntry{where: where}
	name, rest, ok := strings.Cut(s, ":")
	role, rest, ok2 := strings.Cut(rest, ":")
	if !ok || !ok2 || name == "" {
		return e, fmt.Errorf("%s: want NAME:ROLE:SECRET[:SLUG,SLUG…]", where)
	}
	e.key.Name = name
	if !validName(name) {
		// Not echoed: a secret put where the name goes must not be shown.
		return e, fmt.Errorf("%s: the name (before the first ':') must be 1 to 64 ASCII letters, digits, '.', '_' or '-'", where)
	}
	r, err := httpapi.ParseRole(role)
	if err != nil {
		// Not echoed either: it may be a secret in the wrong place.
		return e, fmt.Errorf("%s (key %s): the second field is not a role: want read, write, deploy or admin", where, name)
	}
	e.key.Role = r
	secret, slugs, _ := strings.Cut(rest, ":")
	if secret == "" {
		return e, fmt.Errorf("%s (key %s): a secret, or sha256:<64 hex digits> of it, is required", where, name)
	}
	if secret == "sha256" {
		hash, more, _ := strings.Cut(slugs, ":")
		e.key.Hash, slugs = "sha256:"+hash, more
	} else {
		e.key.Secret = secret
	}
	if slugs != "" {
		for _, slug := range strings.Split(slugs, ",") {
			if slug = strings.TrimSpace(slug); slug == "" {
				return e, fmt.Errorf("%s (key %s): an empty project slug", where, name)
			}
			e.slugs = append(e.slugs, slug)
		}
	}
	// Check the rest now, before anything starts: a throwaway set knows
	// every rule but the slugs and duplicates.
	if err := httpapi.NewKeys().Add(e.key); err != nil {
		return e, fmt.Errorf("%s: %s", where, strings.TrimPrefix(err.Error(), "httpapi: "))
	}
	return e, nil
}

// readKeysFile reads the entries of a -keys file: one a line, blank lines
// and lines starting with # left out.
// The file must be readable by its owner only (chmod 600), as ssh asks of
// a private key: its lines may hold secrets.
func readKeysFile(path string) ([]keyEntry, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("-keys: %w", err)
	}
	defer f.Close()
	if err := ownerOnly(f, path); err != nil {
		return nil, err
	}
	var entries []keyEntry
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		e, err := parseKeyEntry(fmt.Sprintf("%s line %d", path, n), line)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("-keys %s: %w", path, err)
	}
	return entries, nil
}

// buildKeys makes the key set of the entries, with each slug resolved to
// its project. An unknown slug or a duplicate name or secret stops it,
// naming the entry.
func buildKeys(ctx context.Context, store prompts.Store, entries []keyEntry) (*httpapi.Keys, error) {
	var bySlug map[string]string
	keys := httpapi.NewKeys()
	for _, e := range entries {
		if len(e.slugs) > 0 && bySlug == nil {
			all, err := allProjects(ctx, store)
			if err != nil {
				return nil, err
			}
			bySlug = make(map[string]string, len(all))
			for _, p := range all {
				bySlug[p.Slug] = p.ID
			}
		}
		for _, slug := range e.slugs {
			id, ok := bySlug[slug]
			if !ok && looksLikeSlug(slug) {
				return nil, fmt.Errorf("%s (key %s): no project has the slug %q", e.where, e.key.Name, slug)
			}
			if !ok { // not echoed: the tail of a secret holding ':' would show
				return nil, fmt.Errorf("%s (key %s): a project slug is not one of any project", e.where, e.key.Name)
			}
			e.key.ProjectIDs = append(e.key.ProjectIDs, id)
		}
		if err := keys.Add(e.key); err != nil {
			return nil, fmt.Errorf("%s: %s", e.where, strings.TrimPrefix(err.Error(), "httpapi: "))
		}
	}
	return keys, nil
}

// keyEntries gathers the configured keys: -api-key as the admin key named
// default for every project, then each -key, then the lines of -keys.
func keyEntries(cfg config) ([]keyEntry, error) {
	var entries []keyEntry
	if cfg.apiKey != "" {
		e := keyEntry{where: "-api-key", key: httpapi.Key{Name: "default", Role: httpapi.RoleAdmin, Secret: cfg.apiKey}}
		if err := httpapi.NewKeys().Add(e.key); err != nil {
			return nil, errors.New("-api-key: " + strings.TrimPrefix(err.Error(), "httpapi: key default: "))
		}
		entries = append(entries, e)
	}
	for i, s := range cfg.keys {
		e, err := parseKeyEntry(fmt.Sprintf("-key argument %d", i+1), s)
		if err != nil {
			return nil, err
		}
		entries = append(entries, e)
	}
	if cfg.keysFile != "" {
		more, err := readKeysFile(cfg.keysFile)
		if err != nil {
			return nil, err
		}
		entries = append(entries, more...)
	}
	return entries, nil
}

// validName reports whether s is a key name: 1 to 64 ASCII letters,
// digits, '.', '_' and '-'.
func validName(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// looksLikeSlug reports whether s could be a slug (lower-case letters,
// digits and '-', at most 64), and so is safe to echo.
func looksLikeSlug(s string) bool {
	if len(s) == 0 || len(s) > 64 {
		return false
	}
	for _, c := range []byte(s) {
		if !(c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-') {
			return false
		}
	}
	return true
}

// ownerOnly refuses a file that its group or others may read or write.
func ownerOnly(f *os.File, path string) error {
	if runtime.GOOS == "windows" {
		return nil // no such mode bits
	}
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return fmt.Errorf("%s is open to its group or to others (mode %#o): it holds API keys, so only its owner may read or write it; chmod 600 %s", path, perm, path)
	}
	return nil
}

// generatedKey is the key of a server given none: an admin key named
// default, generated at the first start and shown at that start only (key
// is "" after). On a database (keep not nil), its hash is kept in the
// database, so that every replica accepts it: the first replica's key,
// when several start at once. With a data file, the file DATA.key keeps
// its hash (a keys file of one line), so that the key lasts as long as
// the data. In memory only, a new key at every start.
func generatedKey(ctx context.Context, data string, keep func(ctx context.Context, name, hash string) (string, error), logger *slog.Logger) (entries []keyEntry, key string, err error) {
	if key, err = newKey(); err != nil {
		return nil, "", err
	}
	e := keyEntry{where: "the generated key", key: httpapi.Key{Name: "default", Role: httpapi.RoleAdmin, Secret: key}}
	sum := sha256.Sum256([]byte(key))
	hash := "sha256:" + hex.EncodeToString(sum[:])
	if keep != nil {
		kept, err := keep(ctx, "default", hash)
		if err != nil {
			return nil, "", fmt.Errorf("keeping the generated key's hash in the database: %w", err)
		}
		if kept != hash {
			logger.Info("API key: the one printed at the first start on this database")
			return []keyEntry{{where: "the key kept in the database", key: httpapi.Key{Name: "default", Role: httpapi.RoleAdmin, Hash: kept}}}, "", nil
		}
		logger.Info("API key generated; its hash is kept in the database, for every replica")
		return []keyEntry{e}, key, nil
	}
	if data == "" {
		return []keyEntry{e}, key, nil
	}
	path := data + ".key"
	entries, err = readKeysFile(path)
	switch {
	case err == nil:
		logger.Info("API key: the one printed at the first start on this data file", "hash_in", path)
		return entries, "", nil
	case !errors.Is(err, fs.ErrNotExist):
		return nil, "", err
	}
	line := "# The admin key generated at the first start on " + filepath.Base(data) + ", by its hash.\n" +
		"default:admin:" + hash + "\n"
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, "", fmt.Errorf("keeping the generated key's hash: %w", err)
	}
	_, err = f.WriteString(line)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, "", fmt.Errorf("keeping the generated key's hash: %w", err)
	}
	logger.Info("API key generated; its hash is kept beside the data", "hash_in", path)
	return []keyEntry{e}, key, nil
}

// newKey returns a random key of 32 bytes, URL-safe base64.
func newKey() (string, error) {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return "pk_" + base64.RawURLEncoding.EncodeToString(b), nil
}
