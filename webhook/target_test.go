package webhook_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/matryer/is"

	"github.com/promptkit/prompts"
	"github.com/promptkit/prompts/webhook"
)

// refusedHosts are, or name, addresses that are not the public
// Internet's.
var refusedHosts = []string{
	"127.0.0.1", "127.1.2.3", "[::1]", // loopback
	"10.0.0.1", "172.16.0.1", "172.31.255.255", "192.168.1.1", "[fc00::1]", "[fd12:3456::1]", // private
	"169.254.169.254", "[fe80::1]", "[fe80::1%25eth0]", // link-local (a cloud's metadata service)
	"0.0.0.0", "[::]", // unspecified
	"224.0.0.1", "239.255.255.250", "[ff02::1]", "[ff05::2]", // multicast
	"0.1.2.3",                       // this network
	"100.64.0.1", "100.100.100.200", // shared address space (another cloud's metadata service)
	"192.0.0.8", "198.18.0.1", // IETF protocols, benchmarking
	"240.0.0.1", "255.255.255.255", // reserved, broadcast
	"[fec0::1]", "[64:ff9b:1::a00:1]", // site-local, local-use NAT64
	"[::ffff:127.0.0.1]", "[::ffff:a00:1]", "[::ffff:169.254.169.254]", // IPv4-mapped
	"[::10.0.0.1]",                              // IPv4-compatible
	"[64:ff9b::7f00:1]", "[64:ff9b::a9fe:a9fe]", // NAT64 of loopback, link-local
	"[2002:a00:1::1]", "[2002:7f00:1::]", // 6to4 of private, loopback
	"localhost", // a name that resolves to loopback
}

// allowedHosts are public addresses, next to refused ones.
var allowedHosts = []string{
	"93.184.215.14", "8.8.8.8", "1.1.1.1", "[2606:4700:4700::1111]",
	"172.32.0.1", "172.15.255.255", "192.169.0.1", "100.63.255.255", "100.128.0.1", "169.255.0.1",
	"11.0.0.1", "223.255.255.255", "198.20.0.1", "192.0.1.1",
	"[::ffff:8.8.8.8]", "[64:ff9b::808:808]", "[2002:808:808::1]",
}

func TestCheckURLRefusesAddressesThatAreNotPublic(t *testing.T) {
	for _, host := range refusedHosts {
		t.Run(host, func(t *testing.T) {
			is := is.New(t)
			err := webhook.CheckURL(context.Background(), "https://"+host+":8443/hook?token=x", false)
			is.True(errors.Is(err, prompts.ErrInvalid)) // refused as invalid input
			var e *prompts.Error
			is.True(errors.As(err, &e))
			is.Equal(len(e.Fields), 1)
			is.Equal(e.Fields[0].Field, "url")                                     // the field named
			is.True(strings.Contains(e.Fields[0].Detail, "public addresses only")) // and why
			t.Log(e.Fields[0].Detail)

			is.NoErr(webhook.CheckURL(context.Background(), "https://"+host+":8443/hook?token=x", true)) // unless private addresses are allowed
		})
	}
}

func TestCheckURLAllowsPublicAddresses(t *testing.T) {
	for _, host := range allowedHosts {
		t.Run(host, func(t *testing.T) {
			is := is.New(t)
			is.NoErr(webhook.CheckURL(context.Background(), "http://"+host+"/hook", false)) // allowed
		})
	}
}

func TestCheckURLRefusesWhatIsNotAnHTTPURL(t *testing.T) {
	for _, u := range []string{"", "/hook", "ftp://8.8.8.8/", "http:///path", "mailto:a@example.com", "http://[::1", "file:///etc/passwd"} {
		for _, private := range []bool{false, true} {
			is := is.New(t)
			err := webhook.CheckURL(context.Background(), u, private)
			is.True(errors.Is(err, prompts.ErrInvalid)) // refused
		}
	}
}

func TestCheckURLRefusesAHostThatDoesNotResolve(t *testing.T) {
	is := is.New(t)
	err := webhook.CheckURL(context.Background(), "https://no-such-host.invalid/hook", false)
	if prompts.ErrorCode(err) == prompts.CodeUnavailable {
		t.Skipf("no DNS answer here: %v", err)
	}
	is.True(errors.Is(err, prompts.ErrInvalid)) // refused
	t.Log(err)
	is.NoErr(webhook.CheckURL(context.Background(), "https://no-such-host.invalid/hook", true)) // not resolved when private addresses are allowed
}

func TestCheckURLJudgesAnIPv6AddressByTheIPv4AddressItCarries(t *testing.T) {
	for _, c := range []struct {
		host    string
		carries string // the IPv4 address judged; "" when the host is allowed
	}{
		{"[::ffff:169.254.169.254]", "169.254.169.254"},        // IPv4-mapped
		{"[::ffff:8.8.8.8]", ""},                               //
		{"[::169.254.169.254]", "169.254.169.254"},             // IPv4-compatible
		{"[::ffff:0:127.0.0.1]", "127.0.0.1"},                  // IPv4-translated
		{"[::ffff:0:8.8.8.8]", ""},                             //
		{"[64:ff9b::192.168.0.1]", "192.168.0.1"},              // NAT64
		{"[64:ff9b::8.8.4.4]", ""},                             //
		{"[2002:a9fe:a9fe::1]", "169.254.169.254"},             // 6to4
		{"[2002:808:404::1]", ""},                              //
		{"[2001:0:7f00:1::1]", "127.0.0.1"},                    // Teredo: its server
		{"[2001:0:4136:e378:8000:63bf:f5ff:fffe]", "10.0.0.1"}, // Teredo: its client (inverted)
		{"[2001:0:4136:e378:8000:63bf:5646:bf51]", ""},         // Teredo: public server and client
		{"[2001:db8::5efe:a00:1]", "10.0.0.1"},                 // ISATAP, private
		{"[2001:db8::200:5efe:a9fe:a9fe]", "169.254.169.254"},  // ISATAP, u bit set
		{"[2606:4700::200:5efe:808:808]", ""},                  // ISATAP, public
		{"[2001:db8::5eff:a00:1]", ""},                         // not ISATAP
	} {
		t.Run(c.host, func(t *testing.T) {
			is := is.New(t)
			err := webhook.CheckURL(context.Background(), "https://"+c.host+"/hook", false)
			if c.carries == "" {
				is.NoErr(err) // a public IPv4 address inside: allowed
				return
			}
			is.True(errors.Is(err, prompts.ErrInvalid)) // refused
			var e *prompts.Error
			is.True(errors.As(err, &e))
			// Judged by the address it carries (which netip's methods see
			// in an IPv4-mapped one).
			is.True(strings.Contains(e.Fields[0].Detail, "("+c.carries+", inside an IPv6 address)") || strings.Contains(e.Fields[0].Detail, "names the host "+c.carries+","))
			t.Log(e.Fields[0].Detail)
		})
	}
}
