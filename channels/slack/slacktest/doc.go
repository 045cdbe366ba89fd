// Package slacktest is an in-process fake of the Slack Web API for tests: chat.postMessage,
// the external file upload flow (files.getUploadURLExternal, the upload URL, and
// files.completeUploadExternal) and auth.test, served over HTTP on 127.0.0.1 with one bot token
// and one conversation. It speaks the protocol as slack-go and Slack's own clients send it
// (form-encoded or JSON bodies, the token as a bearer header or a form field), answers with
// Slack's shapes ({"ok":true,…} or {"ok":false,"error":"…"}), records what it accepts, and can
// be told to fail. A Server is a channeltest.Peer.
package slacktest
