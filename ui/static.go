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
	if inm := r.Header.Get("If-None-Match"); inm != "" && strings.Contains(inm, a.etag) {
		w.WriteHeader(http.StatusNotModified)
		return
	}
	w.Write(a.body)
}
