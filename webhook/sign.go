package webhook

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/promptkit/prompts"
)

// The headers of a delivery, as the Standard Webhooks specification names
// them.
const (
	HeaderID        = "webhook-id"        // the event's id
	HeaderTimestamp = "webhook-timestamp" // the attempt's time, in Unix seconds
	HeaderSignature = "webhook-signature" // "v1," and the signature, in base64
)

// DefaultTolerance is how far a delivery's timestamp may be from the
// receiver's clock, either way, when Verify is given no tolerance.
const DefaultTolerance = 5 * time.Minute

// The errors of Verify, for errors.Is. The errors it returns name the
// problem further.
var (
	// ErrSecret: the secret is not "whsec_" and base64.
	ErrSecret = errors.New("webhook: the secret must be whsec_ and the base64 of the key")
	// ErrHeaders: a header is missing or malformed.
	ErrHeaders = errors.New("webhook: missing or malformed webhook headers")
	// ErrTimestamp: the timestamp is too far from now, an old delivery
	// replayed perhaps.
	ErrTimestamp = errors.New("webhook: timestamp outside the tolerance")
	// ErrSignature: no signature in the header is the body's.
	ErrSignature = errors.New("webhook: no matching signature")
)

// key returns the HMAC key of a secret: the base64-decoded part after
// "whsec_" (the prefix may be left out, as the specification's libraries
// allow).
func key(secret string) ([]byte, error) {
	k, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, prompts.WebhookSecretPrefix))
	if err != nil || len(k) == 0 {
		return nil, ErrSecret
	}
	return k, nil
}

// mac returns HMAC-SHA256 of "<id>.<timestamp>.<body>" keyed with k.
func mac(k []byte, id, timestamp string, body []byte) []byte {
	h := hmac.New(sha256.New, k)
	h.Write([]byte(id))
	h.Write([]byte{'.'})
	h.Write([]byte(timestamp))
	h.Write([]byte{'.'})
	h.Write(body)
	return h.Sum(nil)
}

// Sign returns the value of the webhook-signature header of a delivery of
// body with webhook-id id at time at (webhook-timestamp, at.Unix()): "v1,"
// and the base64 of HMAC-SHA256, keyed with the base64-decoded part of
// secret after "whsec_", of "<id>.<timestamp>.<body>". An id that is
// empty or holds a "." is refused, as the specification asks, and so is a
// secret that is not base64.
func Sign(secret, id string, at time.Time, body []byte) (string, error) {
	k, err := key(secret)
	if err != nil {
		return "", err
	}
	if id == "" || strings.Contains(id, ".") {
		return "", fmt.Errorf("webhook: the id %q must be non-empty and hold no '.'", id)
	}
	return "v1," + base64.StdEncoding.EncodeToString(mac(k, id, strconv.FormatInt(at.Unix(), 10), body)), nil
}

// Verify reports whether body, received with headers h, was signed with
// secret less than tolerance (DefaultTolerance when tolerance is 0 or
// less) before or after now. webhook-signature may hold several
// space-separated signatures (while a secret is rotated): one "v1"
// signature that matches is enough; others, and signatures of other
// schemes, are skipped. Signatures are compared in constant time. The
// error wraps ErrSecret, ErrHeaders, ErrTimestamp or ErrSignature.
//
// body must be the request's body byte for byte, as read: JSON decoded
// and encoded again is not the same text. A receiver that has seen the
// webhook-id before may skip the event: a delivery may come more than
// once.
func Verify(secret string, h http.Header, body []byte, now time.Time, tolerance time.Duration) error {
	k, err := key(secret)
	if err != nil {
		return err
	}
	id, ts, sigs := h.Get(HeaderID), h.Get(HeaderTimestamp), strings.Join(h.Values(HeaderSignature), " ")
	switch {
	case id == "":
		return fmt.Errorf("%w: no %s header", ErrHeaders, HeaderID)
	case ts == "":
		return fmt.Errorf("%w: no %s header", ErrHeaders, HeaderTimestamp)
	case strings.TrimSpace(sigs) == "":
		return fmt.Errorf("%w: no %s header", ErrHeaders, HeaderSignature)
	}
	sec, err := strconv.ParseInt(ts, 10, 64)
	if err != nil || strings.TrimLeft(ts, "0123456789") != "" {
		return fmt.Errorf("%w: %s %q is not Unix seconds", ErrHeaders, HeaderTimestamp, ts)
	}
	if tolerance <= 0 {
		tolerance = DefaultTolerance
	}
	// Compared in seconds, so that no time overflows.
	switch d, tol := sec-now.Unix(), int64(tolerance/time.Second); {
	case d < -tol:
		return fmt.Errorf("%w: %s is %ds before now (tolerance %v)", ErrTimestamp, HeaderTimestamp, -d, tolerance)
	case d > tol:
		return fmt.Errorf("%w: %s is %ds after now (tolerance %v)", ErrTimestamp, HeaderTimestamp, d, tolerance)
	}
	want := mac(k, id, ts, body)
	for _, s := range strings.Fields(sigs) {
		scheme, sig, ok := strings.Cut(s, ",")
		if !ok || scheme != "v1" {
			continue
		}
		got, err := base64.StdEncoding.DecodeString(sig)
		if err == nil && hmac.Equal(got, want) {
			return nil
		}
	}
	return ErrSignature
}
