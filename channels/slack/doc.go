// Package slack delivers channel messages to a Slack conversation (a public or private channel
// or a direct message, named by its id such as C0123ABCD) through the Slack Web API, as the bot
// whose token is the channel's secret.
//
// A message without attachments is one chat.postMessage: its text is the subject in bold on
// the first line and the text below, for notifications and clients without blocks; its blocks
// are a header with the subject and sections with the text in mrkdwn. Text is escaped (&, < and
// > become &amp;, &lt; and &gt;), so nothing in it is read as a mention, a link or a command.
// The message carries metadata of type herald_delivery whose payload holds the delivery id, so
// that a reader of the conversation can recognise a repeated delivery. The provider id is the
// conversation id and the message timestamp, "C0123ABCD/1712345678.000100".
//
// A message with attachments shares its files in one message: each file gets an upload URL
// from files.getUploadURLExternal, its bytes are streamed from disk to that URL, and one
// files.completeUploadExternal shares them all in the conversation with the text as the
// message's comment. The provider id is the id of the first file.
//
// Errors carry intent as channels requires. HTTP 429 and Slack's ratelimited are transient and
// carry Slack's Retry-After through channels.RetryAfter; 5xx answers, network failures and a
// cancelled or expired context are transient too, as are Slack errors not listed as permanent.
// Errors that no retry can mend (an unknown, archived or unjoined conversation; a bad, revoked or
// expired token; a missing scope; a message too long) are permanent, as is an attachment that is
// missing or larger than the configured maximum. No error or log line holds the token.
//
// The message's HTML is not sent: Slack takes mrkdwn, which the text becomes.
//
// The bot token (xoxb-…) needs the scopes chat:write, to post messages, and files:write, to
// share attachments. The bot must be a member of the conversation; with the further scope
// chat:write.public it may also post messages to public channels it has not joined.
package slack
