// Package teams delivers channel messages to Microsoft Teams through a Teams workflow (Power
// Automate's "When a Teams webhook request is received" trigger, which replaced the Office 365
// connectors' incoming webhooks): {"teamsConfiguration":{"url":"https://…/workflows/…"}}. The
// URL carries the workflow's signature in its query, so it is the channel's secret: sealed,
// never shown (the API shows {"host":"…"}) and never logged.
//
// A message is one POST of {"type":"message","attachments":[{"contentType":
// "application/vnd.microsoft.card.adaptive","content":{…}}]} whose content is an Adaptive Card
// of version 1.4: the subject as its title, the text a line a block, the values the
// condition saw as a fact set, each attached report's table (its first 20 rows, in the
// metrics' number formats, with a note of the rows left out) and an "Open" action per
// attachment with its signed download link (with publicURL set; without it the card says that
// the files are in the console). Every text is a TextRun, which Teams shows without reading
// Markdown. A card that would pass Teams' 28 KB shows fewer rows and less text.
//
// The URL passes the webhook's guard (see package egress): https only, to addresses the
// internet at large reaches, and plain http or internal addresses only inside
// webhook.allowNetworks; it is checked when the channel is saved and again when a send
// connects.
//
// A 200 or 202 answer (any 2xx) posted the card; the provider id is the workflow run's id
// (x-ms-workflow-run-id). 408, 429 and 5xx answers, network errors and timeouts may pass on a
// later attempt, which waits for the answer's Retry-After (at most an hour); any other answer
// is permanent. Teams does not recognise a repeated delivery, so a retry after an answer that
// was lost may post a card twice; the delivery id travels as Idempotency-Key.
package teams
