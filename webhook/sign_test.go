package webhook_test

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/webhook"
)

// specSign signs as the Standard Webhooks specification's text says,
// independently of package webhook: the content is
// "msg_id.timestamp.payload", signed with HMAC-SHA256 keyed with the
// secret's base64 after whsec_, and serialised as "v1," followed by the
// signature in base64.
func specSign(t *testing.T, secret, msgID string, timestamp int64, payload []byte) string {
	t.Helper()
	k, err := base64.StdEncoding.DecodeString(secret[len("whsec_"):])
	if err != nil {
		t.Fatal(err)
	}
	content := fmt.Sprintf("%s.%d.%s", msgID, timestamp, payload)
	m := hmac.New(sha256.New, k)
	m.Write([]byte(content))
	return "v1," + base64.StdEncoding.EncodeToString(m.Sum(nil))
}

// The test vector of the specification's libraries (TestWebhookSign in
// libraries/go/webhook_test.go and its peers in every language).
const (
	vectorSecret    = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
	vectorID        = "msg_p5jXN8AQM9LWM0D4loKWxJek"
	vectorTimestamp = 1614265330
	vectorPayload   = `{"test": 2432232314}`
	vectorSignature = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="
)

func TestSignMatchesTheSpecificationsVector(t *testing.T) {
	is := is.New(t)
	got, err := webhook.Sign(vectorSecret, vectorID, time.Unix(vectorTimestamp, 0), []byte(vectorPayload))
	is.NoErr(err)
	is.Equal(got, vectorSignature)                                                             // the libraries' vector
	is.Equal(specSign(t, vectorSecret, vectorID, vectorTimestamp, []byte(vectorPayload)), got) // and the independent signer agrees
}

func TestVerifyAcceptsTheSpecificationsVector(t *testing.T) {
	is := is.New(t)
	h := headers(vectorID, vectorTimestamp, vectorSignature)
	is.NoErr(webhook.Verify(vectorSecret, h, []byte(vectorPayload), time.Unix(vectorTimestamp+10, 0), 0)) // valid
}

func TestSignAgreesWithTheSpecificationsText(t *testing.T) {
	is := is.New(t)
	for i := range 200 {
		secret := prompts.NewWebhookSecret()
		id := strconv.Itoa(i*7919 + 1)
		body := make([]byte, i*3)
		_, _ = rand.Read(body)
		at := time.Unix(1_700_000_000+int64(i)*3_600, int64(i)*1_000_003) // fractions of a second are not signed
		got, err := webhook.Sign(secret, id, at, body)
		is.NoErr(err)
		is.Equal(got, specSign(t, secret, id, at.Unix(), body))                                     // the same signature
		is.NoErr(webhook.Verify(secret, headers(id, at.Unix(), got), body, at.Add(time.Minute), 0)) // and Verify takes it
	}
}

func headers(id string, ts int64, sig string) http.Header {
	h := http.Header{}
	h.Set("webhook-id", id)
	h.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	h.Set("webhook-signature", sig)
	return h
}

func TestVerify(t *testing.T) {
	secret := prompts.NewWebhookSecret()
	other := prompts.NewWebhookSecret()
	body := []byte(`{"id":"12","type":"project.created"}`)
	const ts = 1_800_000_000
	now := time.Unix(ts, 0)
	good := specSign(t, secret, "12", ts, body)
	stale := specSign(t, other, "12", ts, body)

	for _, c := range []struct {
		name   string
		secret string
		h      http.Header
		body   string
		now    time.Time
		tol    time.Duration
		want   error
	}{
		{"a good signature", secret, headers("12", ts, good), string(body), now, 0, nil},
		{"one good signature among others", secret, headers("12", ts, "v1a,AAAA v1,"+stale[3:]+"  "+good+" v2,xyz v1,"), string(body), now, 0, nil},
		{"the secret without its prefix", secret[len("whsec_"):], headers("12", ts, good), string(body), now, 0, nil},
		{"at the edge of the tolerance, before", secret, headers("12", ts, good), string(body), now.Add(5*time.Minute + 999*time.Millisecond), 0, nil},
		{"at the edge of the tolerance, after", secret, headers("12", ts, good), string(body), now.Add(-5 * time.Minute), 0, nil},
		{"past the tolerance", secret, headers("12", ts, good), string(body), now.Add(5*time.Minute + time.Second), 0, webhook.ErrTimestamp},
		{"before the tolerance", secret, headers("12", ts, good), string(body), now.Add(-5*time.Minute - time.Second), 0, webhook.ErrTimestamp},
		{"within a tolerance given", secret, headers("12", ts, good), string(body), now.Add(time.Hour), 2 * time.Hour, nil},
		{"past a tolerance given", secret, headers("12", ts, good), string(body), now.Add(31 * time.Second), 30 * time.Second, webhook.ErrTimestamp},
		{"another body", secret, headers("12", ts, good), string(body) + " ", now, 0, webhook.ErrSignature},
		{"another id", secret, headers("13", ts, good), string(body), now, 0, webhook.ErrSignature},
		{"another timestamp", secret, headers("12", ts+1, good), string(body), now, 0, webhook.ErrSignature},
		{"another secret", other, headers("12", ts, good), string(body), now, 0, webhook.ErrSignature},
		{"a signature of another scheme", secret, headers("12", ts, "v1a"+good[2:]), string(body), now, 0, webhook.ErrSignature},
		{"an empty signature", secret, headers("12", ts, "v1,"), string(body), now, 0, webhook.ErrSignature},
		{"a signature that is not base64", secret, headers("12", ts, "v1,!!!!"), string(body), now, 0, webhook.ErrSignature},
		{"a bad secret", "whsec_not base64", headers("12", ts, good), string(body), now, 0, webhook.ErrSecret},
		{"an empty secret", "whsec_", headers("12", ts, good), string(body), now, 0, webhook.ErrSecret},
		{"no id", secret, without(headers("12", ts, good), "webhook-id"), string(body), now, 0, webhook.ErrHeaders},
		{"no timestamp", secret, without(headers("12", ts, good), "webhook-timestamp"), string(body), now, 0, webhook.ErrHeaders},
		{"no signature", secret, without(headers("12", ts, good), "webhook-signature"), string(body), now, 0, webhook.ErrHeaders},
		{"a blank signature", secret, headers("12", ts, "  "), string(body), now, 0, webhook.ErrHeaders},
		{"a timestamp with a sign", secret, with(headers("12", ts, good), "webhook-timestamp", "+1800000000"), string(body), now, 0, webhook.ErrHeaders},
		{"a timestamp with a fraction", secret, with(headers("12", ts, good), "webhook-timestamp", "1800000000.5"), string(body), now, 0, webhook.ErrHeaders},
		{"a timestamp too large", secret, with(headers("12", ts, good), "webhook-timestamp", "99999999999999999999"), string(body), now, 0, webhook.ErrHeaders},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			err := webhook.Verify(c.secret, c.h, []byte(c.body), c.now, c.tol)
			if c.want == nil {
				is.NoErr(err) // accepted
				return
			}
			is.True(errors.Is(err, c.want)) // refused for the right reason
			t.Log(err)
		})
	}
}

func TestVerifyReadsSignaturesFromEveryHeaderLine(t *testing.T) {
	is := is.New(t)
	secret := prompts.NewWebhookSecret()
	body := []byte("{}")
	h := headers("7", 1_800_000_000, "v1,"+strings.Repeat("A", 44))
	h.Add("webhook-signature", specSign(t, secret, "7", 1_800_000_000, body))
	is.NoErr(webhook.Verify(secret, h, body, time.Unix(1_800_000_000, 0), 0)) // the second line's signature
}

func TestSignRefusesWhatTheSpecificationForbids(t *testing.T) {
	is := is.New(t)
	secret := prompts.NewWebhookSecret()
	_, err := webhook.Sign(secret, "1.2", time.Now(), nil)
	is.True(err != nil) // an id with a '.'
	_, err = webhook.Sign(secret, "", time.Now(), nil)
	is.True(err != nil) // no id
	_, err = webhook.Sign("whsec_%%%", "1", time.Now(), nil)
	is.True(errors.Is(err, webhook.ErrSecret)) // a secret that is not base64
}

func without(h http.Header, name string) http.Header { h.Del(name); return h }

func with(h http.Header, name, value string) http.Header { h.Set(name, value); return h }
