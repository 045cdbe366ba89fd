// Package googlechat delivers channel messages to a Google Chat space through the space's
// incoming webhook: {"googleChatConfiguration":{"url":"https://chat.googleapis.com/v1/spaces/…/messages?key=…&token=…"}}.
// The URL carries the webhook's key and token, so it is the channel's secret: sealed, never
// shown (the API shows {"host":"chat.googleapis.com"}) and never logged.
//
// The URL must be on https://chat.googleapis.com, or on the host of googleChat.baseURL (for
// tests and proxies), and name a space's messages; messages go to googleChat.baseURL with the
// URL's path and query. A message is one POST of {"text":…,"cardsV2":[…],"thread":{…}}: the
// text is the subject, for notifications, with a zero-width space after every "<" so that
// nothing in it mentions or links; the card has the subject as its title and the subscription's
// title under it, the message's text, the values the condition saw, each attached report's table (its first 20
// rows, each a decoratedText with the row's labels above and its values, in the metrics'
// number formats, below, and a note of the rows left out) and an "Open" button per attachment
// with its signed download link (with publicURL set; without it the card says that the files
// are in the console). Every text of the card is escaped. A message that would pass Google
// Chat's 32,000 bytes shows fewer rows and less text.
//
// A subscription's messages share a thread of the space: the thread key is a digest of the
// subscription's URI, sent with messageReplyOption=REPLY_MESSAGE_FALLBACK_TO_NEW_THREAD, without
// which Google Chat ignores it. Every request carries a requestId made from the delivery id,
// so that a retry after an answer that was lost returns the message the first one made
// instead of posting it again.
//
// A 200 answer posted the message; the provider id is the message's name. 408, 429 and 5xx
// answers, network errors and timeouts may pass on a later attempt, which waits for the
// answer's Retry-After (at most an hour); any other answer is permanent.
package googlechat
