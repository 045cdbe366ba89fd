// Package webhook delivers channel messages as signed HTTP POST requests to a URL of the
// channel's: {"webhookConfiguration":{"url":"https://hooks.example.com/herald","secret":"…"}}.
//
// The body is JSON (see Payload):
//
//	{"deliveryId":"…","subscription":"…","subscriptionTitle":"…","run":"…",
//	 "instant":"2026-01-01T08:00:00Z","manual":false,"resolved":false,
//	 "subject":"…","text":"…","values":{"<metric URI>":12.5},
//	 "attachments":[{"name":"report.pdf","contentType":"application/pdf","size":1234,"content":"<base64>","url":"https://…/f/…"}]}
//
// "instant" is left out for a message no run made and a value is null where the condition saw
// none. Attachments are inline in order while their total stays within webhook.maxInlineBytes;
// one that does not fit is listed with "omitted":"larger than webhook.maxInlineBytes" and no
// content.
//
// A channel with a template ({"webhookConfiguration":{"url":…,"secret":…,"template":"{\"text\": ${subject}}"}})
// posts what the template renders instead: JSON with ${...} expressions of the subscription's
// template language over the metrics and TemplateVars, each written as a JSON value (a number
// plainly, null without a value, a string quoted and escaped) or, inside a string of the
// template's text, as the string's content. The template is rendered against a sample run when
// the channel is saved, and refused, naming its line and column, when the result is not JSON.
//
// The request carries Content-Type: application/json, User-Agent: Herald-Webhook/1, the
// delivery id in both Idempotency-Key and X-Herald-Delivery (a retry repeats it, so a receiver
// drops ids it has seen), X-Herald-Timestamp with the time of sending in Unix seconds, and
// X-Herald-Signature: "sha256=" and the lowercase hex of HMAC-SHA256 under the channel's secret
// of the timestamp, a dot and the body. Verify checks both headers for a receiver.
//
// Endpoints that are not reachable on the internet at large are refused: every address of a
// range of IANA's IPv4 and IPv6 Special-Purpose Address Registries that is not globally
// reachable (loopback, private, carrier-grade NAT, link-local with the cloud metadata address,
// benchmarking, documentation, reserved, IETF protocol assignments, unspecified, multicast,
// broadcast, IPv6 outside global unicast), the IPv4-mapped, IPv4-compatible and IPv4-translated
// forms, NAT64 (64:ff9b::/96), 6to4 and Teredo addresses judged by the IPv4 addresses they
// carry, local-use NAT64 (64:ff9b:1::/48), and the addresses of this host's own interfaces
// (read at start and again once a minute old), unless they lie in a network of
// webhook.allowNetworks; plain http is sent only to addresses in those networks. A host that is
// a number (127.1, 2130706433) or under localhost is refused as well. The configuration is
// checked when it is saved, a literal address included; a host name is resolved when the sender
// connects, every address it resolves to is checked and only those addresses are dialled, so
// that a name cannot be checked at one address and reached at another. No proxy is used and
// redirects are not followed.
//
// A 2xx response delivers the message. 408, 429 and 5xx responses, network errors and timeouts
// may pass on a later attempt, which waits for the response's Retry-After (at most an hour);
// any other response, a refused address included, is permanent.
package webhook
