package webhook_test

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"time"

	"github.com/promptkit/prompts/webhook"
)

// A receiver checks each delivery's signature, on the body as it came,
// before it trusts it.
func ExampleVerify() {
	secret := "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw" // as the webhook's create answered it

	receiver := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "cannot read the body", http.StatusBadRequest)
			return
		}
		if err := webhook.Verify(secret, r.Header, body, time.Now(), 5*time.Minute); err != nil {
			http.Error(w, err.Error(), http.StatusUnauthorized)
			return
		}
		fmt.Printf("event %s: %s\n", r.Header.Get("webhook-id"), body)
		w.WriteHeader(http.StatusNoContent) // any 2xx: delivered
	})

	// A delivery, as a dispatcher sends it, and the same with another body.
	signed := []byte(`{"id":"42","type":"project.created"}`)
	now := time.Now()
	sig, _ := webhook.Sign(secret, "42", now, signed)
	for _, body := range [][]byte{signed, []byte(`{"id":"43"}`)} {
		r := httptest.NewRequest(http.MethodPost, "/hooks/prompts", bytes.NewReader(body))
		r.Header.Set("webhook-id", "42")
		r.Header.Set("webhook-timestamp", fmt.Sprint(now.Unix()))
		r.Header.Set("webhook-signature", sig)
		w := httptest.NewRecorder()
		receiver.ServeHTTP(w, r)
		fmt.Print(w.Code, " ", w.Body.String())
	}
	// Output:
	// event 42: {"id":"42","type":"project.created"}
	// 204 401 webhook: no matching signature
}
