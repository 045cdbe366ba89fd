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
// The request carries Content-Type: application/json, User-Agent: Herald-Webhook/1, the
// delivery id in both Idempotency-Key and X-Herald-Delivery (a retry repeats it, so a receiver
// drops ids it has seen), X-Herald-Timestamp with the time of sending in Unix seconds, and
// X-Herald-Signature: "sha256=" and the lowercase hex of HMAC-SHA256 under the channel's secret
// of the timestamp, a dot and the body. Verify checks both headers for a receiver.
//
// Endpoints inside the network Herald runs in are refused: loopback, private (RFC 1918,
// fc00::/7), link-local (with the cloud metadata address), unspecified, multicast, broadcast,
// carrier-grade NAT and 0.0.0.0/8 addresses, the IPv4-mapped IPv6 forms included, unless they
// lie in a network of webhook.allowNetworks; plain http is sent only to addresses in those
// networks. The configuration is checked when it is saved, a literal address included; a host
// name is resolved when the sender connects, every address it resolves to is checked and only
// those addresses are dialled, so that a name cannot be checked at one address and reached at
// another. No proxy is used and redirects are not followed.
//
// A 2xx response delivers the message. 408, 429 and 5xx responses, network errors and timeouts
// may pass on a later attempt, which waits for the response's Retry-After (at most an hour);
// any other response, a refused address included, is permanent.
package webhook
