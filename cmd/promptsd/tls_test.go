package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/matryer/is"
)

// selfSigned writes a certificate for 127.0.0.1 and its key to dir, and
// returns their paths and a pool that trusts the certificate.
func selfSigned(t *testing.T, dir string) (cert, key string, pool *x509.CertPool) {
	t.Helper()
	is := is.New(t)
	priv, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	is.NoErr(err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "promptsd test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &priv.PublicKey, priv)
	is.NoErr(err)
	keyDER, err := x509.MarshalPKCS8PrivateKey(priv)
	is.NoErr(err)
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	is.NoErr(os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	is.NoErr(os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600))
	parsed, err := x509.ParseCertificate(der)
	is.NoErr(err)
	pool = x509.NewCertPool()
	pool.AddCert(parsed)
	return cert, key, pool
}

// sessionCookie is the Set-Cookie of the web interface's session in resp.
func sessionCookie(resp *http.Response) *http.Cookie {
	for _, c := range resp.Cookies() {
		if c.MaxAge >= 0 && c.Value != "" {
			return c
		}
	}
	return nil
}

// With -tls-cert and -tls-key the server speaks HTTPS only, API, probes
// and web interface, whose session cookie is then Secure.
func TestServerServesHTTPS(t *testing.T) {
	is := is.New(t)
	cert, key, pool := selfSigned(t, t.TempDir())
	s := start(t, []string{"PROMPTS_API_KEY=" + testKey}, "-tls-cert", cert, "-tls-key", key)
	is.True(strings.HasPrefix(s.base, "https://127.0.0.1:"))
	s.waitLog(t, regexp.MustCompile(`Web UI: https://`)) // what is printed (after the ready line) says so too
	client := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
	resp, err := client.Get(s.root() + "/livez")
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, 200)
	is.True(resp.TLS != nil)
	req, err := http.NewRequest("GET", s.base+"/projects", nil)
	is.NoErr(err)
	req.Header.Set("X-API-Key", testKey)
	resp, err = client.Do(req)
	is.NoErr(err)
	resp.Body.Close()
	is.Equal(resp.StatusCode, 200)
	// Plain HTTP on the port is not served.
	plain := &http.Client{Timeout: 5 * time.Second}
	if resp, err := plain.Get("http" + strings.TrimPrefix(s.root(), "https") + "/livez"); err == nil {
		resp.Body.Close()
		is.True(resp.StatusCode != 200)
	}

	w := newWebClient(t, s)
	w.c.Transport = client.Transport
	s.key = testKey
	resp, _ = w.do("GET", "/ui/", nil)
	is.Equal(resp.StatusCode, 200)
	resp, _ = w.do("POST", "/ui/signin", url.Values{"key": {testKey}})
	is.Equal(resp.StatusCode, http.StatusSeeOther)
	c := sessionCookie(resp)
	is.True(c != nil)
	is.True(c.Secure)
}

// A bad certificate, or one of the pair alone, stops the start.
func TestServerRefusesBadTLSFlags(t *testing.T) {
	is := is.New(t)
	dir := t.TempDir()
	cert, _, _ := selfSigned(t, dir)
	for _, args := range [][]string{{"-tls-cert", cert}, {"-tls-cert", cert, "-tls-key", cert}} {
		s := launchFails(t, args...)
		is.True(strings.Contains(s, "-tls")) // names the flags
	}
}

// With -trust-proxy, X-Forwarded-Proto: https makes the session cookie
// Secure; without the header, or without the flag, it is not.
func TestServerTrustsItsProxy(t *testing.T) {
	is := is.New(t)
	signIn := func(s *server, proto string) *http.Cookie {
		t.Helper()
		w := newWebClient(t, s)
		if proto != "" {
			w.head = http.Header{"X-Forwarded-Proto": {proto}}
		}
		w.do("GET", "/ui/", nil)
		resp, _ := w.do("POST", "/ui/signin", url.Values{"key": {testKey}})
		is.Equal(resp.StatusCode, http.StatusSeeOther)
		c := sessionCookie(resp)
		is.True(c != nil)
		return c
	}
	env := []string{"PROMPTS_API_KEY=" + testKey}
	proxied := start(t, env, "-trust-proxy")
	is.True(signIn(proxied, "https").Secure)
	is.True(!signIn(proxied, "").Secure)
	is.True(!signIn(proxied, "http").Secure)
	direct := start(t, env)
	is.True(!signIn(direct, "https").Secure) // a client's header is not believed
}

// launchFails runs the server with args, which must stop its start, and
// returns its output.
func launchFails(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"-addr", "127.0.0.1:0", "-data="}, args...)...)
	cmd.Env = append(os.Environ(), serverVar+"=1", "PROMPTS_API_KEY="+testKey)
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatalf("started with %q:\n%s", args, out)
	}
	return string(out)
}
