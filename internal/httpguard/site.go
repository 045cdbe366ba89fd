package httpguard

import "net/http"

// Safe reports whether a request with method m changes nothing by the rules
// of HTTP: GET, HEAD and OPTIONS.
func Safe(m string) bool {
	return m == http.MethodGet || m == http.MethodHead || m == http.MethodOptions
}

// CrossSite reports whether r is a state-changing request that the browser
// says comes from another site (Sec-Fetch-Site: cross-site). A request
// without the header (from a program, or an old browser) is not.
func CrossSite(r *http.Request) bool {
	return !Safe(r.Method) && r.Header.Get("Sec-Fetch-Site") == "cross-site"
}

// OtherOrigin reports whether r is a state-changing request that the browser
// says comes from any other origin than the page's own (Sec-Fetch-Site:
// cross-site or same-site): a form of the console is posted only from the
// console's own pages, and a sibling site must not post one either.
func OtherOrigin(r *http.Request) bool {
	switch r.Header.Get("Sec-Fetch-Site") {
	case "cross-site", "same-site":
		return !Safe(r.Method)
	}
	return false
}
