package console

import (
	"net/url"
	"strconv"
)

// Notices are the messages a page shows after a form, by the key the form's
// redirect puts in the page's address (?notice=<key>): the address carries a
// key, never text, so a link cannot put words of its own on a console page.
// An unknown key shows nothing.
var notices = map[string]string{
	"saved":               "Saved.",
	"subscriptionDeleted": "Subscription deleted.",
	"sending":             "Sending now: the run is at the top of the history.",
	"sentRecently":        "Not sent: too soon; try again in a few seconds.",
	"paused":              "Paused: it fires no more until you resume it.",
	"resumed":             "Resumed: it fires on its schedule again.",
	"channelSaved":        "Channel saved.",
	"channelDeleted":      "Channel deleted.",
}

// noticeURL is path with the notice key, and the values (such as a number of
// seconds to wait) that its message may show.
func noticeURL(path, key string, values ...string) string {
	v := url.Values{"notice": {key}}
	for i := 0; i+1 < len(values); i += 2 {
		v.Set(values[i], values[i+1])
	}
	return path + "?" + v.Encode()
}

// notice is the message of the page's ?notice= key: sentRecently says how
// many seconds to wait when ?wait= is a number of them.
func notice(q *req) string {
	query := q.r.URL.Query()
	key := query.Get("notice")
	msg := notices[key]
	if key == "sentRecently" {
		if n, err := strconv.Atoi(query.Get("wait")); err == nil && n > 0 && n <= 3600 {
			msg = "Not sent: too soon; try again in " + strconv.Itoa(n) + " seconds."
		}
	}
	return msg
}
