// Package feedchat posts channel messages to a Salesforce Chatter-compatible feed: it logs in
// with the OAuth 2 password grant using the channel's user name and password, caches the access
// token per user, and posts a text feed item as that user.
package feedchat
