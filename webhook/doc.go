// Package webhook delivers the event log to webhooks: it signs each
// delivery as the Standard Webhooks specification says
// (https://www.standardwebhooks.com), reaches public addresses only, and
// retries until the receiver answers or a day has passed. Dispatcher does
// the delivering; Verify is for receivers, in Go.
//
// # A delivery
//
// Each event a webhook subscribes to is sent as a POST of the event's
// JSON, as GET /events answers it (Content-Type: application/json), with
// the headers
//
//	webhook-id:        the event's id, "1234"
//	webhook-timestamp: the attempt's time, in Unix seconds
//	webhook-signature: "v1," and the base64 of HMAC-SHA256 of
//	                   "<webhook-id>.<webhook-timestamp>.<body>",
//	                   keyed with the base64-decoded part of the
//	                   webhook's secret after "whsec_"
//
// A receiver checks the signature on the body exactly as it came (Verify
// does, and so do the specification's libraries in many languages), and
// that the timestamp is recent, against replays. An event may come more
// than once: a receiver that has seen its webhook-id may skip it.
//
// # Retries
//
// An attempt fails when the answer is not 2xx (a redirect included:
// redirects are not followed), when none comes within AttemptTimeout
// (10 s), or when no connection can be made. A failed delivery is tried
// again 2 s later, then after 4 s, 8 s, and so on, each wait twice the one
// before up to 10 minutes, and every 10 minutes after that, until a day
// after its event (see RetryAt); an attempt that fails then is the last,
// and the delivery has failed. Every attempt is recorded
// (prompts.WebhookStore's ListDeliveryAttempts). The schedule is exact,
// without random jitter: deliveries of different events fall due at
// different times already.
//
// Each webhook has its turn: when the deliveries of several webhooks are
// due, the dispatcher's workers (WithConcurrency) are shared among them,
// the webhook with the fewest attempts in flight first (the Store's
// ClaimDeliveries takes them in that order), so that a receiver that never
// answers, holding workers until its attempts time out, delays another
// webhook's deliveries by one AttemptTimeout at most, however many of its
// own are due. An attempt's error is kept to 160 bytes, so that a receiver
// that fails for a day costs the Store one small record per attempt. An
// idle dispatcher sleeps until the next retry it scheduled falls due, or
// its poll (a second by default) comes, when it makes one claim.
//
// Deliveries wait in the Store, so that they survive a restart; a
// dispatcher claims those that are due for a while (a lease of 30 s), so
// that among dispatchers sharing a Store, in one process or many, one at
// a time attempts a delivery. A dispatcher that stops records its
// attempts in flight as failed, due again at once. A dispatcher that dies
// leaves its claims to end: the deliveries are attempted again then, and
// may reach a receiver twice.
//
// # Safe targets
//
// Whoever may create a webhook chooses where the server sends requests.
// So that this cannot reach what only the server can (a cloud's metadata
// service, a database's HTTP port, an administration page on localhost),
// a webhook's host may neither be nor resolve to an address that is:
//
//   - loopback (127.0.0.0/8, ::1) or unspecified (0.0.0.0, ::), or in
//     0.0.0.0/8;
//   - private (10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, fc00::/7) or
//     site-local (fec0::/10);
//   - link-local (169.254.0.0/16, fe80::/10) or multicast (224.0.0.0/4,
//     ff00::/8);
//   - in the shared address space 100.64.0.0/10 (carrier-grade NAT, and
//     the internal networks of some clouds, whose metadata services live
//     there), in 192.0.0.0/24, 198.18.0.0/15 (benchmarking), 240.0.0.0/4
//     (reserved, and broadcast), or 64:ff9b:1::/48 (local-use NAT64);
//   - an IPv6 address that carries one of those IPv4 addresses:
//     IPv4-mapped (::ffff:127.0.0.1), IPv4-compatible (::/96),
//     IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96), 6to4
//     (2002::/16), Teredo (2001::/32: its server's address or its
//     client's) or ISATAP (an interface identifier of 0000:5efe or
//     0200:5efe followed by the IPv4 address).
//
// CheckURL checks a URL when a webhook is created, and the dispatcher
// checks the address of every connection it makes, after DNS, so that a
// name that resolves to a public address when checked and to a private
// one later (DNS rebinding) gets nowhere. The dispatcher therefore uses no
// proxy, whatever HTTP_PROXY and HTTPS_PROXY say: through a proxy, the
// address checked would be the proxy's, not the receiver's. The AllowPrivate
// option (the standalone server's -webhooks-allow-private) turns the
// checks off, for receivers on a private network.
package webhook
