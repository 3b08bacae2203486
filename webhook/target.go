package webhook

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"syscall"

	"github.com/promptkit/prompts"
)

// refusedPrefixes are the networks, besides those that netip.Addr's
// methods name (loopback, private, link-local, unspecified, multicast), of
// addresses that are not the public Internet's.
var refusedPrefixes = []struct {
	prefix netip.Prefix
	what   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "in 0.0.0.0/8 (this network)"},
	{netip.MustParsePrefix("100.64.0.0/10"), "in 100.64.0.0/10 (shared: carrier-grade NAT, cloud internals)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "in 192.0.0.0/24 (IETF protocol assignments)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "in 198.18.0.0/15 (benchmarking)"},
	{netip.MustParsePrefix("240.0.0.0/4"), "in 240.0.0.0/4 (reserved, broadcast included)"},
	{netip.MustParsePrefix("fec0::/10"), "a site-local address (fec0::/10)"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "in 64:ff9b:1::/48 (local-use NAT64)"},
}

// refused returns why ip may not be a webhook's address, or "" when it
// may. An IPv6 address that carries an IPv4 one (see embedded) is judged
// by that IPv4 address as well.
func refused(ip netip.Addr) string {
	ip = ip.WithZone("")
	if ip.Is4In6() { // judged by its IPv4 address alone
		if why := refused(ip.Unmap()); why != "" {
			return why + " (" + ip.Unmap().String() + ", inside an IPv6 address)"
		}
		return ""
	}
	switch {
	case !ip.IsValid():
		return "not an IP address"
	case ip.IsUnspecified():
		return "an unspecified address"
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate():
		return "a private address"
	case ip.IsLinkLocalUnicast(), ip.IsLinkLocalMulticast():
		return "a link-local address"
	case ip.IsMulticast(), ip.IsInterfaceLocalMulticast():
		return "a multicast address"
	}
	for _, p := range refusedPrefixes {
		if p.prefix.Contains(ip) {
			return p.what
		}
	}
	if ip.Is6() {
		for _, v4 := range embedded(ip) {
			if why := refused(v4); why != "" {
				return why + " (" + v4.String() + ", inside an IPv6 address)"
			}
		}
	}
	return ""
}

var (
	compatible = netip.MustParsePrefix("::/96")
	mapped     = netip.MustParsePrefix("::ffff:0:0/96")
	translated = netip.MustParsePrefix("::ffff:0:0:0/96")
	nat64      = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour  = netip.MustParsePrefix("2002::/16")
	teredo     = netip.MustParsePrefix("2001::/32")
)

// embedded returns the IPv4 addresses that an IPv6 address carries, by
// which it reaches an IPv4 host or passes through one:
//
//   - IPv4-mapped (::ffff:0:0/96), IPv4-compatible (::/96),
//     IPv4-translated (::ffff:0:0:0/96) and NAT64 (64:ff9b::/96): the
//     last 32 bits;
//   - 6to4 (2002::/16): the 32 bits after the prefix;
//   - Teredo (2001::/32): the server's address (the 32 bits after the
//     prefix) and the client's (the last 32 bits, inverted);
//   - ISATAP (an interface identifier of 0000:5efe or 0200:5efe, with
//     any prefix): the last 32 bits.
//
// (64:ff9b:1::/48, local-use NAT64, is refused whole.)
func embedded(ip netip.Addr) []netip.Addr {
	b := ip.As16()
	last := netip.AddrFrom4([4]byte(b[12:16]))
	switch {
	case mapped.Contains(ip), compatible.Contains(ip), translated.Contains(ip), nat64.Contains(ip):
		return []netip.Addr{last}
	case sixToFour.Contains(ip):
		return []netip.Addr{netip.AddrFrom4([4]byte(b[2:6]))}
	case teredo.Contains(ip):
		client := [4]byte(b[12:16])
		for i := range client {
			client[i] ^= 0xff
		}
		return []netip.Addr{netip.AddrFrom4([4]byte(b[4:8])), netip.AddrFrom4(client)}
	case b[8]&^0x03 == 0 && b[9] == 0 && b[10] == 0x5e && b[11] == 0xfe: // ISATAP (u and g bits either way)
		return []netip.Addr{last}
	}
	return nil
}

// CheckURL checks that rawURL may be a webhook's: an absolute http or
// https URL with a host (prompts.NewWebhook.Validate checks the rest of
// its form) whose addresses are all on the public Internet: neither the
// host nor any address it resolves to is refused (see the package doc).
// With allowPrivate, any address is allowed and the host is not resolved.
//
// An error for the URL or its addresses is prompts.ErrInvalid with the
// field "url"; a resolution that fails for another reason than an unknown
// name (no answer from DNS) is prompts.ErrUnavailable.
//
// The dispatcher checks the address of every connection again, so that a
// name that resolves to another address later cannot get around the
// check.
func CheckURL(ctx context.Context, rawURL string, allowPrivate bool) error {
	u, err := url.Parse(rawURL)
	switch {
	case err != nil || !u.IsAbs() || u.Opaque != "":
		return invalidURL("must be an absolute http or https URL")
	case u.Scheme != "http" && u.Scheme != "https":
		return invalidURL("must be http or https")
	case u.Hostname() == "":
		return invalidURL("must name a host")
	}
	if allowPrivate {
		return nil
	}
	host := u.Hostname()
	if ip, err := netip.ParseAddr(host); err == nil {
		if why := refused(ip); why != "" {
			return invalidURL(fmt.Sprintf("names the host %s, %s; webhooks reach public addresses only", ip, why))
		}
		return nil
	}
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		var dnsErr *net.DNSError
		if errors.As(err, &dnsErr) && dnsErr.IsNotFound {
			return invalidURL(fmt.Sprintf("names the host %q, which does not resolve", host))
		}
		return &prompts.Error{Code: prompts.CodeUnavailable, Message: "cannot resolve the webhook's host " + host, Err: err}
	}
	for _, ip := range ips {
		if why := refused(ip); why != "" {
			return invalidURL(fmt.Sprintf("names the host %q, which resolves to %s, %s; webhooks reach public addresses only", host, ip.Unmap().WithZone(""), why))
		}
	}
	return nil
}

func invalidURL(detail string) error {
	return &prompts.Error{Code: prompts.CodeInvalid, Message: "invalid input", Fields: []prompts.FieldError{{Field: "url", Detail: detail}}}
}

// errRefused is the error of a connection that the dialer refused.
type errRefused struct {
	ip  netip.Addr
	why string
}

func (e *errRefused) Error() string {
	return fmt.Sprintf("refused to connect to %s, %s: webhooks reach public addresses only", e.ip, e.why)
}

// control is the net.Dialer.Control of a dispatcher that reaches public
// addresses only: it sees the address being connected to, after any
// resolution, so that no DNS answer can lead it elsewhere.
func control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused to connect to %q: not an IP address and port", address)
	}
	if why := refused(ap.Addr()); why != "" {
		return &errRefused{ip: ap.Addr().WithZone(""), why: why}
	}
	return nil
}
