package ui

import (
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"io/fs"
	"net/http"
	"path"
	"strings"
)

//go:embed static
var staticFS embed.FS

// assets are the embedded styles and script, each served under a name
// that holds a hash of its content (ui.3f2a9c1b.css), so that browsers may
// keep it for a year and still never use an old one.
type assets struct {
	byName   map[string]string // ui.css → ui.3f2a9c1b.css
	byHashed map[string]asset
}

type asset struct {
	body  []byte
	ctype string
	etag  string
}

func loadAssets() (*assets, error) {
	a := &assets{byName: map[string]string{}, byHashed: map[string]asset{}}
	err := fs.WalkDir(staticFS, "static", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		body, err := staticFS.ReadFile(p)
		if err != nil {
			return err
		}
		sum := sha256.Sum256(body)
		hash := hex.EncodeToString(sum[:])[:12]
		name := path.Base(p)
		ext := path.Ext(name)
		hashed := strings.TrimSuffix(name, ext) + "." + hash + ext
		ctype := "application/octet-stream"
		switch ext {
		case ".css":
			ctype = "text/css; charset=utf-8"
		case ".js":
			ctype = "text/javascript; charset=utf-8"
		}
		a.byName[name] = hashed
		a.byHashed[hashed] = asset{body: body, ctype: ctype, etag: `"` + hash + `"`}
		return nil
	})
	return a, err
}

// url returns the path of the asset named name under prefix.
func (a *assets) url(prefix, name string) string {
	return prefix + "static/" + a.byName[name]
}

// serve answers GET {prefix}static/{name}: the asset, cached for a year
// (its name changes with its content), with an ETag.
func (h *Handler) serveStatic(w http.ResponseWriter, r *http.Request) {
	a, ok := h.static.byHashed[r.PathValue("name")]
	if !ok {
		h.notFound(w, r, nil)
		return
	}
	hd := w.Header()
	hd.Set("Content-Type", a.ctype)
	hd.Set("Cache-Control", "public, max-age=31536000, immutable")
	hd.Set("ETag", a.etag)
	if noneMatch(r.Header.Values("If-None-Match"), a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(a.body)
}

// noneMatch reports whether the If-None-Match header (its values) fails
// for an asset with etag, so that a GET is answered 304 (RFC 9110,
// 13.1.2): it is "*", which every asset that exists matches, or a list
// of entity tags one of which is etag, compared weakly (W/ aside).
func noneMatch(header []string, etag string) bool {
	for _, v := range header {
		for tag := range strings.SplitSeq(v, ",") {
			tag = strings.TrimSpace(tag)
			if tag == "*" || strings.TrimPrefix(tag, "W/") == etag {
				return true
			}
		}
	}
	return false
}
